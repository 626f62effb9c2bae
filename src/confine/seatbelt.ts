// The Seatbelt jail (macOS): the command runs under /usr/bin/sandbox-exec with a profile that
// allows everything, then denies writing everywhere but the writable paths, and denies reading
// (and listing) the home directory but the readable and writable paths; the directory the
// command works in is allowed last, since in a Seatbelt profile later rules win.
//
// Every path reaches sandbox-exec as a `-D NAME=path` parameter, and the profile refers to it as
// (param "NAME"): no path is ever pasted into the profile's text, so no name — quotes,
// parentheses, backslashes, newlines — can change what the profile says. Seatbelt matches a rule
// against the path of the file as the kernel resolved it, links followed (/tmp is /private/tmp),
// so every path is resolved before it goes in (resolveSeatbeltPolicy), and a link in the fork
// pointing at ~/.ssh is judged as ~/.ssh.
//
// seatbeltProfile and seatbeltArgv are pure and tested on every platform; resolveSeatbeltPolicy
// takes a view of the file system, tested with a fake one; runSeatbelt runs the command (the
// runner the seatbelt jail's plan uses, tested with a stand-in sandbox-exec).
import { ChildProcess, SpawnOptions, spawn as nodeSpawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError } from '../errors';
import { isInside } from '../paths/inside';
import { inSandbox as nativeInSandbox } from '../native';
import { FsView, Grant, nodeFs } from './policy';
import { Waitable, fromTerminal as waitFromTerminal, runAndWait, waitable } from './wait';

export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** What the command may read and write; every path absolute. */
export interface SeatbeltPolicy {
  /** The home directory, whose contents are kept from the command. */
  home: string;
  /** More spellings or homes to keep (the user's home where $HOME differs, a path before links
   *  were resolved). */
  homes?: readonly string[];
  /** The directory the command works in: read and written, allowed last. */
  directory: string;
  /** Readable (in the home directory: git's configuration, toolchains, -r paths…). */
  readable: readonly string[];
  /** Readable and writable (caches, temporary directories, -w paths…). */
  writable: readonly string[];
  /** The program (absolute, resolved beforehand so that 126/127 are known) and its arguments. */
  command: readonly string[];
  /** Paths known to be files, matched with `literal`; every other path is matched with
   *  `subpath`: itself and everything under it, so a directory made later is covered too. */
  files?: readonly string[];
  /** --allow-host: the port of confine's proxy on 127.0.0.1, the only TCP/UDP peer allowed. */
  proxyPort?: number;
}

/**
 * The rules that leave the network to confine's proxy alone (--allow-host): connecting only to
 * its loopback port, and to unix sockets but the system resolver's (the proxy resolves names, so
 * a DNS query cannot carry data out); binding and accepting only on loopback, so the command
 * cannot serve what it reads to another machine. The port is checked to be a port: it is the
 * one value pasted into the profile's text.
 */
export function seatbeltNetworkRules(port: number): string[] {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ArbError('ARB_INTERNAL', `seatbelt: the proxy's port is not a port: ${port}`);
  return [
    "; --allow-host: the network only through confine's proxy, on this machine's loopback.",
    '(deny network-outbound)',
    `(allow network-outbound (remote ip "localhost:${port}"))`,
    "; Unix sockets (the broker's, local services), but not the resolver: the proxy resolves names.",
    '(allow network-outbound (remote unix-socket))',
    '(deny network-outbound (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))',
    '; Servers only on loopback: nothing it reads is served to another machine.',
    '(deny network-bind network-inbound)',
    '(allow network-bind network-inbound (local ip "localhost:*"))',
    '',
  ];
}

/** A profile and the parameters it refers to, in the order given to sandbox-exec. */
export interface SeatbeltProfile {
  profile: string;
  params: [name: string, value: string][];
}

// --- what macOS adds to every policy -------------------------------------------------------------

/** Writable on every Mac, whatever the policy says (resolved spellings). */
export const DARWIN_WRITABLE: readonly { path: string; why: string }[] = [
  { path: '/private/tmp', why: 'temporary files (/tmp)' },
  { path: '/private/var/tmp', why: 'temporary files (/var/tmp)' },
  { path: '/private/var/folders', why: "per-user temporary files and caches ($TMPDIR, confstr's DARWIN_USER_*_DIR)" },
];

/** Devices the command may open for writing: the terminal and the harmless ones. */
export const DARWIN_DEVICES: readonly { path: string; why: string }[] = [
  { path: '/dev/null', why: 'a harmless device' },
  { path: '/dev/zero', why: 'a harmless device' },
  { path: '/dev/random', why: 'a harmless device' },
  { path: '/dev/urandom', why: 'a harmless device' },
  { path: '/dev/tty', why: 'the terminal' },
  { path: '/dev/ptmx', why: 'new pseudo-terminals (script, tmux, expect)' },
  { path: '/dev/dtracehelper', why: 'opened read-write at start by programs built with DTrace probes (node, python)' },
];

/** /dev/fd/N (and /dev/stdout, /dev/stderr, links to it): the command's own descriptors. */
export const DARWIN_FD_DIR = '/dev/fd';

/** In the home directory, relative: writable and readable on every Mac. */
export const DARWIN_HOME_WRITABLE: readonly { rel: string; why: string }[] = [
  { rel: 'Library/Caches', why: 'caches (Homebrew, pip, Xcode, node-gyp…)' },
];

/** In the home directory, relative: readable on every Mac. */
export const DARWIN_HOME_READABLE: readonly { rel: string; why: string }[] = [
  { rel: 'Library/Keychains', why: 'keychains: the keychain itself guards its items (git credentials, gh)' },
];

// --- the profile ---------------------------------------------------------------------------------

function checkPath(p: string, what: string): string {
  if (typeof p !== 'string' || p === '' || p.includes('\0') || !path.isAbsolute(p)) {
    throw new ArbError('ARB_INTERNAL', `seatbelt: ${what} must be an absolute path without a NUL byte: ${JSON.stringify(p)}`);
  }
  const n = path.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

/** Paths without duplicates, and without those inside another of them matched by subpath. */
function prune(paths: readonly string[], isFile: (p: string) => boolean): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((p) => !unique.some((q) => q !== p && !isFile(q) && isInside(p, q, 'lexical')));
}

/**
 * The profile for a policy, and the parameters it names. Pure: the paths must already be
 * resolved (resolveSeatbeltPolicy); they appear only as parameter values.
 */
export function seatbeltProfile(policy: SeatbeltPolicy): SeatbeltProfile {
  const home = checkPath(policy.home, 'the home directory');
  if (home === '/') throw new ArbError('ARB_INTERNAL', "seatbelt: the home directory cannot be '/'");
  const homes = [...new Set([home, ...(policy.homes ?? []).map((h) => checkPath(h, 'a home directory'))])].filter((h) => h !== '/');
  const directory = checkPath(policy.directory, 'the directory');
  const files = new Set((policy.files ?? []).map((f) => checkPath(f, 'a file')));
  const isFile = (p: string) => files.has(p);

  const writable = prune(
    [
      ...DARWIN_WRITABLE.map((w) => w.path),
      ...homes.flatMap((h) => DARWIN_HOME_WRITABLE.map((w) => path.join(h, w.rel))),
      ...policy.writable.map((w) => checkPath(w, 'a writable path')),
    ],
    isFile,
  );
  // Reading is denied only in the home directories, so only readable paths there need a rule.
  const readable = prune(
    [
      ...homes.flatMap((h) => DARWIN_HOME_READABLE.map((r) => path.join(h, r.rel))),
      ...policy.readable.map((r) => checkPath(r, 'a readable path')),
    ],
    isFile,
    // (One that holds a home, like -r /Users, opens it, as Landlock's grant beneath it would.)
  ).filter((r) => homes.some((h) => isInside(r, h, 'lexical') || isInside(h, r, 'lexical')) && !writable.some((w) => !isFile(w) && isInside(r, w, 'lexical')));

  // Each path becomes a parameter; the profile names the parameter, never the path.
  const params: [string, string][] = [];
  const ref = (name: string, value: string, match: 'literal' | 'subpath') => {
    params.push([name, value]);
    return `(${match} (param "${name}"))`;
  };
  const kind = (p: string) => (isFile(p) ? 'literal' : 'subpath');
  const homeRefs = homes.map((h, i) => ref(`HOME_${i}`, h, 'subpath'));
  const writableRefs = writable.map((w, i) => ref(`WRITABLE_${i}`, w, kind(w)));
  const readableRefs = readable.map((r, i) => ref(`READABLE_${i}`, r, kind(r)));
  const deviceRefs = [...DARWIN_DEVICES.map((dev, i) => ref(`DEVICE_${i}`, dev.path, 'literal')), ref('DEVICE_FD', DARWIN_FD_DIR, 'subpath')];
  const directoryRef = ref('DIRECTORY', directory, 'subpath');

  const rule = (head: string, filters: string[]) =>
    filters.length === 0 ? [] : [`(${head}`, ...filters.map((f) => `  ${f}`), ')'];

  const lines = [
    '(version 1)',
    '; Everything is allowed but what is denied below; later rules win over earlier ones.',
    '(allow default)',
    '',
    '; Writing: nowhere but the writable paths (caches, temporary directories, -w).',
    '(deny file-write*)',
    ...rule('allow file-write*', writableRefs),
    "; The terminal, the harmless devices, the command's own descriptors (/dev/fd, /dev/stdout).",
    ...rule('allow file-write*', deviceRefs),
    '; Pseudo-terminals the command opens (its own, or new ones from /dev/ptmx).',
    '(allow file-write* (regex #"^/dev/ttys[0-9]+$"))',
    '; Raw disks: never through a device node, whatever the user (or sudo inside) may do.',
    '(deny file-read* file-write* (regex #"^/dev/r?disk[0-9]"))',
    '',
    '; Reading the home directory: its files and listings are denied, so secrets (~/.ssh, ~/.aws,',
    '; tokens in shell startup files) are kept without naming them...',
    ...rule('deny file-read*', homeRefs),
    '; ...but not stat, so that realpath, getcwd and `test -e` work through it (names are not listed).',
    ...rule('allow file-read-metadata', homeRefs),
    "; What commands need to run: git's configuration, toolchains, keychains, -r.",
    ...rule('allow file-read*', readableRefs),
    '; What the command may write, it may read.',
    ...rule('allow file-read*', writableRefs),
    '',
    "; A second name for a file would put it under another path's rules: no hard links.",
    '(deny file-link)',
    '; Ways to have something run outside the sandbox: opening an app or a document',
    '; (LaunchServices, open(1)), Apple events (osascript telling Terminal), launchd jobs.',
    '(deny lsopen)',
    '(deny appleevent-send)',
    '(deny job-creation)',
    '; Other processes of the user: not signalled, not inspected (their environment holds tokens).',
    '(deny signal)',
    '(allow signal (target same-sandbox))',
    '(deny process-info*)',
    '(allow process-info* (target same-sandbox))',
    '',
    ...(policy.proxyPort !== undefined ? seatbeltNetworkRules(policy.proxyPort) : []),
    '; The directory the command works in, last, so that no rule above takes it away.',
    `(allow file-read* file-write* ${directoryRef})`,
    '',
  ];
  return { profile: lines.join('\n'), params };
}

/**
 * The whole argument list: ['/usr/bin/sandbox-exec', '-p', PROFILE, '-D', 'NAME=path', …, '--',
 * program, args…]. sandbox-exec is named by its absolute path, never looked up on PATH, which the
 * user (or a command that confines another) may have changed.
 */
export function seatbeltArgv(policy: SeatbeltPolicy): string[] {
  if (policy.command.length === 0) throw new ArbError('ARB_INTERNAL', 'seatbelt: no command to run');
  checkPath(policy.command[0], 'the program');
  const { profile, params } = seatbeltProfile(policy);
  const argv = [SANDBOX_EXEC, '-p', profile];
  for (const [name, value] of params) argv.push('-D', `${name}=${value}`);
  argv.push('--', ...policy.command);
  return argv;
}

/**
 * The Seatbelt policy for the grants src/confine/policy.ts decides (the lists Landlock and bwrap
 * take): 'write' grants are the writable paths, 'read' grants the readable ones (those around
 * the home directories are dropped by the profile: reading outside them is never denied), 'list'
 * grants mean nothing here; a grant that is not a directory is matched as a file.
 */
export function seatbeltPolicyFromGrants(input: {
  homes: readonly string[];
  directory: string;
  grants: readonly Pick<Grant, 'path' | 'access' | 'isDirectory'>[];
  command: readonly string[];
}): SeatbeltPolicy {
  if (input.homes.length === 0) throw new ArbError('ARB_INTERNAL', 'seatbelt: no home directory to protect');
  const readable: string[] = [];
  const writable: string[] = [];
  const files: string[] = [];
  for (const g of input.grants) {
    if (g.access === 'list' || g.path === input.directory) continue;
    (g.access === 'write' ? writable : readable).push(g.path);
    if (!g.isDirectory) files.push(g.path);
  }
  return { home: input.homes[0], homes: input.homes.slice(1), directory: input.directory, readable, writable, command: input.command, files };
}

// --- resolving paths -----------------------------------------------------------------------------

/** The look at the file system resolving needs: policy.ts's, less listing directories. */
export type PathView = Pick<FsView, 'realpath' | 'isDirectory'>;

export const nodePathView: PathView = nodeFs;

/**
 * A path as Seatbelt will see it: links resolved (/tmp/x -> /private/tmp/x). A path that does not
 * exist yet is resolved as far as it exists, the rest kept, so that a rule for ~/.cache still
 * matches when the command makes it.
 */
export function resolveSeatbeltPath(p: string, view: PathView): string {
  const normal = checkPath(p, 'a path');
  const rest: string[] = [];
  let at = normal;
  for (;;) {
    const real = view.realpath(at);
    if (real !== undefined) return rest.length === 0 ? real : path.join(real, ...rest.reverse());
    if (at === '/') return normal;
    rest.push(path.basename(at));
    at = path.dirname(at);
  }
}

/**
 * The policy with every path resolved; files marked (literal); each home kept under both its
 * spellings, where resolving changed it: denying one more name costs nothing, and a home reached
 * through a link is then denied whichever way Seatbelt sees it.
 */
export function resolveSeatbeltPolicy(policy: SeatbeltPolicy, view: PathView = nodePathView): SeatbeltPolicy {
  const resolve = (p: string) => resolveSeatbeltPath(p, view);
  const given = [policy.home, ...(policy.homes ?? [])].map((h) => checkPath(h, 'a home directory'));
  const homes = [...new Set(given.flatMap((h) => [resolve(h), h]))];
  const readable = policy.readable.map(resolve);
  const writable = policy.writable.map(resolve);
  const files = [...readable, ...writable].filter((p) => view.realpath(p) !== undefined && !view.isDirectory(p));
  return {
    home: homes[0],
    homes: homes.slice(1),
    directory: resolve(policy.directory),
    readable,
    writable,
    command: policy.command,
    files: [...new Set([...(policy.files ?? []).map(resolve), ...files])],
    ...(policy.proxyPort !== undefined ? { proxyPort: policy.proxyPort } : {}),
  };
}

// --- running -------------------------------------------------------------------------------------

/** What runSeatbelt needs: the policy (resolved here) and how to run the command. */
export interface SeatbeltRun extends SeatbeltPolicy {
  /** The command's environment; CLAUDE_CODE_SANDBOXED=1 is added. */
  env: Readonly<Record<string, string | undefined>>;
  /** Where the command starts; the directory by default. */
  cwd?: string;
}

/** What runSeatbelt touches outside itself: replaced in tests. */
export interface SeatbeltDeps {
  /** native.inSandbox on a Mac: whether this process is already in a Seatbelt sandbox. */
  inSandbox(): boolean;
  view: PathView;
  spawn(file: string, args: readonly string[], options: SpawnOptions): ChildProcess;
  sandboxExec: string;
  /** Whether a signal sent to confine most likely came from the terminal, so the command (in
   *  the same foreground process group) got it too and must not get it twice. */
  fromTerminal(signal: NodeJS.Signals): boolean;
}

function defaultDeps(): SeatbeltDeps {
  return {
    inSandbox: nativeInSandbox,
    view: nodePathView,
    spawn: (file, args, options) => nodeSpawn(file, args, options),
    sandboxExec: SANDBOX_EXEC,
    fromTerminal: waitFromTerminal,
  };
}

/** sandbox-exec's argument list and environment for a run, after the checks that must hold first. */
export interface SeatbeltCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/**
 * Checks that the command can be confined here and builds how to start it: throws an ArbError
 * (nothing run) when this process is already inside a Seatbelt sandbox (sandbox-exec cannot
 * apply a second profile) or when sandbox-exec is missing.
 */
export function prepareSeatbelt(run: SeatbeltRun, deps: Partial<SeatbeltDeps> = {}): SeatbeltCommand {
  const d: SeatbeltDeps = { ...defaultDeps(), ...deps };
  if (d.inSandbox()) {
    throw new ArbError('ARB_UNSUPPORTED', 'cannot confine: this process already runs inside a Seatbelt sandbox, and sandbox-exec cannot apply a second one', {
      hint: 'run arb confine from outside the sandbox (a confined command cannot confine another)',
    });
  }
  try {
    fs.accessSync(d.sandboxExec, fs.constants.X_OK);
  } catch (err) {
    throw new ArbError('ARB_UNSUPPORTED', `cannot confine: ${d.sandboxExec} is missing or cannot be run`, {
      cause: err,
      hint: 'confine needs macOS\'s sandbox-exec; without it the command is not run (use --jail none to run it unconfined, knowingly)',
    });
  }
  const argv = seatbeltArgv(resolveSeatbeltPolicy(run, d.view));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(run.env)) if (v !== undefined) env[k] = v;
  env.CLAUDE_CODE_SANDBOXED = '1';
  return { file: d.sandboxExec, args: argv.slice(1), env, cwd: run.cwd ?? run.directory };
}

/**
 * Runs the command under sandbox-exec and waits for it, as every waiting jail does
 * (src/confine/wait.ts: the one signal rule, the plan's hooks, --rm): resolves with confine's
 * exit status. Node cannot execve, so confine cannot become sandbox-exec the way it becomes the
 * launcher under Landlock. Rejects as prepareSeatbelt does (the fork removed, nothing run), or
 * when sandbox-exec cannot be started.
 */
export function runSeatbelt(run: SeatbeltRun, plan: Waitable, deps: Partial<SeatbeltDeps> = {}): Promise<number> {
  const d: SeatbeltDeps = { ...defaultDeps(), ...deps };
  return runAndWait(
    plan,
    () => {
      const { file, args, env, cwd } = prepareSeatbelt(run, d);
      return d.spawn(file, args, { cwd, env, stdio: 'inherit' });
    },
    { fromTerminal: d.fromTerminal },
  );
}

/**
 * confine's step for the Seatbelt jail (src/confine/jail.ts puts it after 'policy'): the same
 * grants Landlock would get become the profile, and the plan runs under sandbox-exec, waiting
 * for it (with the broker's hooks and --rm, as every waiting jail does).
 */
export const seatbeltStep = (plan: import('./run').ConfinePlan): void => {
  if (!plan.policy) throw new ArbError('ARB_INTERNAL', 'the seatbelt step needs the policy step first');
  const run: SeatbeltRun = {
    ...seatbeltPolicyFromGrants({ homes: plan.homes, directory: plan.dir, grants: plan.policy.grants, command: [plan.file, ...plan.argv.slice(1)] }),
    // --allow-host: the port of the proxy confine already listens on (src/confine/net/step.ts).
    ...(plan.proxy ? { proxyPort: plan.proxy.port } : {}),
    env: plan.env,
  };
  plan.waitReasons.push('sandbox-exec');
  plan.runner = (p) => runSeatbelt(run, waitable(p));
};
