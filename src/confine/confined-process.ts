// One way to start a program confined by a Landlock ruleset (landlock.ts's buildRuleset, from a
// policy's grants), with standard streams and a working directory given as descriptors, and wait
// for it. The broker runs the tool it was allowed (gh) with it.
//
// How: confine's launcher (src/confine/launch.ts, native/launcher/), as every jail runs its
// command. spawnLauncher gives it the three streams as 0, 1, 2, the plan on a pipe (the tool's
// environment holds secrets, so never on a command line) and the working directory's descriptor
// (the plan's cwd-fd record): the launcher fchdir()s there, applies the ruleset and seccomp's
// terminal rule, and execs the program. So the program runs in the directory that was opened,
// whatever its name leads to by then, and nothing is applied in Node or a fork of it.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

import type { ConfineFailure } from '../native';
import type { LandlockRuleset } from './landlock';
import { spawnLauncher } from './launch';

export interface ConfinedProgram {
  /** Absolute path of the program. */
  file: string;
  /** Its arguments, argv[0] first. */
  argv: string[];
  env: Record<string, string>;
  /** A descriptor of the directory it runs in (opened by the caller, who closes it). */
  cwdFd: number;
  /** That directory's name, for messages (default: the descriptor's). */
  cwd?: string;
  /** Its standard input, output and error. */
  stdio: [number, number, number];
  ruleset: LandlockRuleset;
  /** Whether seccomp filters work here: then TIOCSTI and TIOCLINUX are denied, as in the jails. */
  seccomp?: boolean;
}

export interface ConfinedExit {
  status: number | null;
  signal: NodeJS.Signals | null;
}

export interface ConfinedProcess {
  child: ChildProcess;
  /** Resolves when it has exited; rejects if it could not be started at all. */
  exited: Promise<ConfinedExit>;
}

/** The status a shell gives for a program it could not run: 127 not found, 126 otherwise; 1 for
 *  a step before (the directory, the ruleset). */
function failedStatus(e: ConfineFailure): number {
  if (e.syscall !== 'execve') return 1;
  return e.code === 'ENOENT' ? 127 : 126;
}

/** Starts `program` confined, as described at the top of this file. */
export function spawnConfined(program: ConfinedProgram): ConfinedProcess {
  const { child, started } = spawnLauncher(
    {
      cwd: program.cwd ?? `/proc/self/fd/${program.cwdFd}`,
      file: program.file,
      argv: program.argv,
      env: program.env,
      landlock: program.ruleset,
      ...(program.seccomp ? { seccomp: { denyTerminalInjection: true, denyNetwork: false } } : {}),
    },
    { stdio: program.stdio, cwdFd: program.cwdFd },
  );
  const exit = new Promise<ConfinedExit>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (status, signal) => resolve({ status, signal }));
  });
  const failure = started.then(
    () => undefined,
    (err: ConfineFailure) => err,
  );
  const exited = Promise.all([exit, failure]).then(([ended, err]): ConfinedExit => {
    if (!err) return ended;
    // The launcher reported why it ran nothing: said where the program's errors would go.
    const what = err.syscall === 'execve' ? `cannot run ${program.file} confined` : `cannot confine ${program.file} (${err.syscall}${err.path ? ` '${err.path}'` : ''})`;
    try {
      fs.writeSync(program.stdio[2], `confine: ${what}: ${err.code ?? err.message}\n`);
    } catch {
      /* its stderr is gone */
    }
    return { status: failedStatus(err), signal: null };
  });
  return { child, exited };
}
