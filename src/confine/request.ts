// What was asked of arb confine, parsed once at the edge into one typed value: by the command
// line (src/commands/confine.ts, from yargs) and by the library (src/index.ts, from its options).
// Nothing below src/commands knows yargs; everything below reads this.

/** One `arb confine` (or `confine()`) request. */
export interface ConfineRequest {
  /** How messages are prefixed: "arb confine" or "confine". */
  program: string;
  /** CMD (looked up on PATH as a shell would) and its ARGS; '' only for --explain without CMD. */
  command: string;
  args: string[];
  /** -d DIR: run in DIR itself, no fork. */
  dir?: string;
  /** -w PATH, -r PATH (as given; resolved against cwd; a leading ~ is the home directory). */
  write: string[];
  read: string[];
  /** -n NAME, --no-ignore: how the fork is made. */
  name?: string;
  noIgnore: boolean;
  /** --rm: wait, then remove the fork and its base. */
  rm: boolean;
  /** -v. */
  verbose: boolean;
  /** Where relative paths start, and the directory forked without -d. */
  cwd: string;
  /** The environment the command starts from. */
  env: NodeJS.ProcessEnv;
  /** -e NAME: kept although it looks secret. */
  keepEnv: string[];
  /** --no-network: loopback only. */
  noNetwork: boolean;
  /** --allow-host HOST…: only these hosts, through confine's proxy (src/confine/net/). */
  allowHost: string[];
  /** --net-log FILE: every connection through the proxy, as JSON lines. */
  netLog?: string;
  /** --landlock-only: no namespaces. */
  landlockOnly: boolean;
  /** --headless: no one is at the screen (no broker). */
  headless: boolean;
  /** --jail as given (checked against the platform before anything is made). */
  jail?: string;
  /** --mount specs as given, in order (bwrap only). */
  mounts: string[];
  /** --preset as given ('none' turns the choice by the command's name off). */
  preset?: string;
  /** Wait for the command rather than become it (the library never replaces its caller). */
  wait: boolean;
}

/** A request with every optional list empty and every switch off: for the library and tests. */
export function confineRequest(given: Pick<ConfineRequest, 'command'> & Partial<ConfineRequest>): ConfineRequest {
  return {
    program: 'arb confine',
    args: [],
    write: [],
    read: [],
    noIgnore: false,
    rm: false,
    verbose: false,
    cwd: process.cwd(),
    env: process.env,
    keepEnv: [],
    noNetwork: false,
    allowHost: [],
    landlockOnly: false,
    headless: false,
    mounts: [],
    wait: false,
    ...given,
  };
}
