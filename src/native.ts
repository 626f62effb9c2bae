// The only importer of the addon. The whole native surface is typed here, and every error the
// addon throws (errno, syscall, path) becomes a Node-style error with `code` here.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getSystemErrorName } from 'node:util';

import { ArbError } from './errors';

/** What cloneTree was asked to do: one pass over `source` making `base`, then `fork` from it. */
export interface CloneTreeOptions {
  /** An existing directory; links are followed to reach it, never below it. */
  source: string;
  /** An existing empty directory, made from the source; then `fork` is cloned from each new file in it. */
  base: string;
  /** Optional: an existing empty directory, a second copy cloned from the base. */
  fork?: string;
  /**
   * Paths relative to source (no leading './'; a trailing '/' is allowed) left out, with
   * everything under them. Buffers carry names that are not UTF-8, as git -z prints them.
   */
  skip: (string | Buffer)[];
  /** Threads to use; defaults to the number of cores, at most 8. */
  threads?: number;
  /**
   * Set element 0 to non-zero (Atomics.store) to stop the clone part way: it then fails with
   * ECANCELED. Must be backed by a SharedArrayBuffer, which the threads read.
   */
  cancel?: Int32Array;
  /** Called now and then (at most four times a second) from the main thread with running totals. */
  onProgress?: (progress: CloneProgress) => void;
}

export interface CloneProgress {
  files: number;
  bytes: number;
}

export interface CloneResult {
  /** Regular files made (in the base; the fork has the same). */
  files: number;
  /** Directories made below the root. */
  directories: number;
  symlinks: number;
  fifos: number;
  /** Bytes in the source's regular files (one copy's worth). */
  bytes: number;
  /** Files with content whose blocks were shared (FICLONE / clonefile), in base and fork. */
  reflinked: number;
  /** Files with content copied in full (copy_file_range, read/write), in base or fork. */
  copied: number;
  /**
   * macOS only: directories cloned whole, each by one clonefile(2), in base and fork. What is
   * inside them is not looked at, so not counted in files, directories, bytes… (nor reported
   * in leftOut: clonefile takes FIFOs and sockets inside a directory along).
   */
  clonedWhole?: number;
  /** Sockets and devices, which are not cloned: relative path (and its bytes) and kind. */
  leftOut: { path: string; pathBytes?: Buffer; kind: 'socket' | 'device' }[];
}

/** One step of the mount plan inside the command's mount namespace (see native/launcher/layers.h MountOp). */
export interface MountOpSpec {
  kind: 'bind-rw' | 'bind-ro' | 'mask' | 'tmpfs' | 'devpts' | 'symlink';
  path: string;
  target?: string;
  /** bind-rw/bind-ro: what to bind at `path`, when not `path` itself (the terminal at /dev/console). */
  source?: string;
  /** tmpfs: its size limit in bytes (none: the kernel's default, half of the memory). */
  size?: number;
  /** mask, tmpfs: the mode of its root (default 0755 for a mask, 1777 for a tmpfs). */
  mode?: number;
}

export interface NamespacePlanSpec {
  pid: boolean;
  net: boolean;
  uid: number;
  gid: number;
  readOnlyRoot?: boolean;
  mounts: MountOpSpec[];
}

export interface SeccompPlanSpec {
  denyTerminalInjection: boolean;
  denyNetwork: boolean;
  /** With denyNetwork: TCP sockets are let through (for Landlock's port rule, --allow-host). */
  allowTcp?: boolean;
}

/** A failure the launcher reported: the errno of the step that failed. */
export interface ConfineFailure extends Error {
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
  /** True when the launcher was already restricted (Landlock applied) when it failed. */
  confined?: boolean;
}

export interface WaitResult {
  /** Exit status, or null if killed by a signal. */
  status: number | null;
  /** Signal number that ended it, or null. */
  signal: number | null;
}

interface Addon {
  platform: 'linux' | 'darwin';
  cloneTree?(options: Omit<CloneTreeOptions, 'onProgress'>, onProgress?: (files: number, bytes: number) => void): Promise<CloneResult>;
  // confine on Linux (linux/launch.cc, linux/process.cc)
  landlockAbi?(): number;
  memfdWith?(data: Buffer): number;
  execve?(file: string, argv: string[], env: string[], inherit: number[]): never;
  terminalForeground?(): { pgrp: number; foreground: number };
  clonefile?(src: string, dst: string): void;
  inSandbox?(): boolean; // macOS (darwin/sandbox_check.cc)
  seccompAvailable?(): boolean;
  // fd passing (posix/fd_passing.cc), for the broker
  unixConnect?(path: string): number;
  sendFds?(fd: number, byte: number, fds: number[]): void;
  recvFds?(fd: number, maxFds: number): ReceivedFds | null;
  // removing a fork or base by descriptors (posix/remove_tree.cc)
  removeTree?(parent: Buffer, name: Buffer, dev: number, ino: number): RemoveTreeOutcome;
  socketPair?(): [number, number]; // posix/fd_passing.cc
  // arb diff's walk (linux/list_dir.cc)
  listDirPairs?(paths: Buffer, ids: Float64Array, pairs: Int32Array, trustedUntilMs: number): NativePairListing;
  processPlaces?(): { pids: Int32Array; places: Buffer }; // linux/proc_places.cc
}

let cached: Addon | undefined;
let loadedFrom: string | undefined;

/** The package's root: dist/.. (the bundle keeps this file's __dirname, see scripts/build-cli.js). */
function packageRoot(): string {
  return path.resolve(__dirname, '..');
}

/**
 * Where a prebuilt addon for this platform is shipped in the package (made by scripts/prebuild,
 * carried by the packed tarball, never committed): prebuilds/PLATFORM-ARCH/, as node-gyp-build
 * lays them out, the file named for the C library it was linked against on Linux.
 * scripts/install-addon.js, which runs before anything is compiled, names the same file.
 */
export function prebuiltAddonPath(root = packageRoot()): string {
  const file = process.platform === 'linux' ? 'arb.glibc.node' : 'arb.node';
  return path.join(root, 'prebuilds', `${process.platform}-${process.arch}`, file);
}

/**
 * Every place the addon is looked for, in order: $ARB_ADDON (a build of one's own), a build from
 * source in the package (made for this very machine, so first), then the prebuilt one.
 */
export function addonCandidates(root = packageRoot()): string[] {
  return [
    process.env.ARB_ADDON,
    path.join(root, 'build', 'Release', 'arb.node'),
    path.join(root, 'build', 'Debug', 'arb.node'),
    prebuiltAddonPath(root),
  ].filter((p): p is string => Boolean(p));
}

/** The path of the addon that loads (what addon() would use); throws as addon() does. */
export function addonPath(): string {
  return findAddon().file;
}

function findAddon(): { file: string; addon: Addon } {
  const root = packageRoot();
  const failures: string[] = [];
  for (const candidate of addonCandidates(root)) {
    // A missing file is said so plainly (and costs no exception from require).
    if (!fs.existsSync(candidate)) {
      failures.push(`  ${candidate}: not there`);
      continue;
    }
    try {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      return { file: candidate, addon: require(candidate) as Addon };
    } catch (err) {
      failures.push(`  ${candidate}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  const platform = `${process.platform}-${process.arch}`;
  let shipped: string[] = [];
  try {
    shipped = fs.readdirSync(path.join(root, 'prebuilds')).sort();
  } catch {
    /* none shipped: a checkout, or a package packed without them */
  }
  const prebuilds = shipped.length ? `this package has prebuilt addons for ${shipped.join(', ')} only` : 'this package has no prebuilt addons';
  throw new ArbError(
    'ARB_UNSUPPORTED',
    `cannot load arb's native addon for ${platform} (Node ${process.version}); tried:\n${failures.join('\n')}\n` +
      `${prebuilds}; build it from source (needs cmake and a C++17 compiler): cd ${root} && npm run build:native`,
    { hint: 'an install that ran no install script (npm --ignore-scripts, or scripts npm did not allow) built none' },
  );
}

/** Loads the addon once; if it cannot, the error names the platform, every path tried and how to build it. */
export function addon(): Addon {
  if (!cached) {
    const found = findAddon();
    cached = found.addon;
    loadedFrom = found.file;
  }
  return cached;
}

/** Turns the addon's {errno, syscall, path} into a Node-style error with `code`. */
export function toSystemError(err: unknown): Error {
  if (!(err instanceof Error)) return new Error(String(err));
  const e = err as Error & { errno?: number; syscall?: string; path?: string; code?: string };
  if (typeof e.errno === 'number' && e.errno > 0 && !e.code) {
    let name = `E${e.errno}`;
    try {
      name = getSystemErrorName(-e.errno);
    } catch {
      /* unknown errno: keep the number */
    }
    e.code = name;
    e.errno = -e.errno;
    e.message = `${e.syscall ?? 'system call'} ${e.path ? `'${e.path}' ` : ''}failed: ${name}`;
  }
  return e;
}

function required<K extends keyof Addon>(name: K): NonNullable<Addon[K]> {
  const fn = addon()[name];
  if (!fn) {
    throw new ArbError('ARB_UNSUPPORTED', `this build of arb has no ${String(name)} on ${process.platform}`);
  }
  return fn as NonNullable<Addon[K]>;
}

/**
 * Whether the addon loads and has `name`: what a caller with a fallback in JavaScript (or none
 * needed) asks before calling it. A missing addon is a no, not an error.
 */
function offers(name: keyof Addon): boolean {
  try {
    return typeof addon()[name] === 'function';
  } catch {
    return false;
  }
}

/**
 * An error the addon threw or reported, as a Node-style error of this realm (code, syscall,
 * path): under jest the addon's errors are of another realm, and toSystemError would not see
 * them as errors with an errno.
 */
function addonError(err: unknown): Error {
  const e = err as { message?: string; errno?: unknown; syscall?: string; path?: string };
  return toSystemError(typeof e?.errno === 'number' ? Object.assign(new Error(e.message), { errno: e.errno, syscall: e.syscall, path: e.path }) : err);
}

// --- clone ----------------------------------------------------------------------------------

export async function cloneTree(options: CloneTreeOptions): Promise<CloneResult> {
  const fn = required('cloneTree');
  const { onProgress, ...rest } = options;
  const report = onProgress
    ? (files: number, bytes: number) => {
        try {
          onProgress({ files, bytes });
        } catch {
          /* a progress display that fails must not fail the clone */
        }
      }
    : undefined;
  try {
    return await fn.call(addon(), rest, report);
  } catch (err) {
    throw toSystemError(err);
  }
}

// --- landlock -------------------------------------------------------------------------------

/** The Landlock ABI the kernel offers, or a negative errno (-ENOSYS, -EOPNOTSUPP). */
export function landlockAbi(): number {
  return required('landlockAbi')();
}

/**
 * The launcher (native/launcher/), built beside the addon: the program that applies confine's
 * sandbox and execs the command. Throws, naming where it looked, if it is not there.
 */
export function launcherPath(): string {
  addon();
  const file = path.join(path.dirname(loadedFrom as string), 'arb-launcher');
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    (require('node:fs') as typeof import('node:fs')).accessSync(file, 1 /* X_OK */);
  } catch {
    throw new ArbError('ARB_INTERNAL', `cannot find confine's launcher '${file}' beside the addon`, {
      hint: 'run `npm install` (or `npm run build`) in the arb checkout to build it',
    });
  }
  return file;
}

/** A close-on-exec memfd holding `data`, read from its start. */
export function memfdWith(data: Buffer): number {
  try {
    return required('memfdWith')(data);
  } catch (err) {
    throw toSystemError(err);
  }
}

/**
 * Replaces this process with `file` (Node has no execve): 0, 1, 2 and `inherit` stay open in it.
 * Returns only by throwing (errno, syscall 'execve', path).
 */
export function execve(file: string, argv: string[], env: string[], inherit: number[] = []): never {
  try {
    return required('execve')(file, argv, env, inherit);
  } catch (err) {
    throw toSystemError(err);
  }
}

/** This process's group and the terminal's foreground group (-1 without a terminal). */
export function terminalForeground(): { pgrp: number; foreground: number } {
  return required('terminalForeground')();
}

// --- fd passing (the broker) ----------------------------------------------------------------

/** One byte and the descriptors that came with it; byte -1 (and no descriptors) at end of stream. */
export interface ReceivedFds {
  byte: number;
  fds: number[];
}

/** Connects a blocking, close-on-exec unix stream socket to `socketPath`; returns its descriptor. */
export function unixConnect(socketPath: string): number {
  try {
    return required('unixConnect')(socketPath);
  } catch (err) {
    throw toSystemError(err);
  }
}

/** Sends one byte with `fds` attached (SCM_RIGHTS); the caller's descriptors stay open. */
export function sendFds(fd: number, byte: number, fds: number[]): void {
  try {
    required('sendFds')(fd, byte, fds);
  } catch (err) {
    throw toSystemError(err);
  }
}

/**
 * Reads one byte and the descriptors attached to it, without blocking: null if nothing has
 * arrived yet. Received descriptors are close-on-exec and the caller's to close. More than
 * `maxFds` descriptors fail with EMSGSIZE (and none are kept).
 */
export function recvFds(fd: number, maxFds: number): ReceivedFds | null {
  try {
    return required('recvFds')(fd, maxFds);
  } catch (err) {
    throw toSystemError(err);
  }
}

/** A connected pair of close-on-exec unix stream sockets (--allow-host: the launcher's report
 *  socket, on which the proxy's listener comes back). */
export function socketPair(): [number, number] {
  try {
    return required('socketPair')();
  } catch (err) {
    throw toSystemError(err);
  }
}

// --- hardening: namespaces and seccomp (src/confine/hardening.ts) ---------------------------

/** What probing the namespaces found: ok, or the step that failed (errno as a code, e.g. 'EPERM'). */
export interface NamespaceProbeResult {
  ok: boolean;
  errno?: number;
  code?: string;
  syscall?: string;
  path?: string;
}

/** Whether this kernel takes seccomp filters (that return an errno). Installs nothing. */
export function seccompAvailable(): boolean {
  return required('seccompAvailable')();
}

// --- macOS: Seatbelt (src/confine/seatbelt.ts) ------------------------------------------------

/**
 * Whether this process already runs inside a Seatbelt sandbox (sandbox_check), in which case
 * sandbox-exec cannot apply another profile. macOS only.
 */
export function inSandbox(): boolean {
  try {
    return required('inSandbox')();
  } catch (err) {
    throw toSystemError(err);
  }
}

// --- arb diff: listing directories (src/tree/list-dir.ts) -------------------------------------

/**
 * Pairs of directories (a base's and a fork's, either may be absent) listed with what lstat says
 * of each entry, as rows: pair p's rows are `start[p]` to `start[p + 1]`, each a name (one char
 * per byte) on one side or both, in name order (bytewise), the pairs the same by lstat left out
 * (src/tree/list-dir.ts sameByLstat). The stats are two per row, index 2r the base's entry and
 * 2r + 1 the fork's, mode 0 where that side has none.
 */
export interface DirPairsListing {
  /** Per directory listed: undefined when listed; 'other' when another directory is there; or why not. */
  problem: (undefined | 'other' | NodeJS.ErrnoException)[];
  start: Uint32Array;
  names: string[];
  mode: Uint32Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  ctimeMs: Float64Array;
  dev: Float64Array;
  ino: Float64Array;
  /** Per pair: the newest modification time of the fork's entries (rows or not); -Infinity if none. */
  newest: Float64Array;
}

/** As the addon returns it: the names in one string, each ended by a NUL; failures apart. */
type NativePairListing = Omit<DirPairsListing, 'names' | 'problem'> & {
  names: string;
  outcome: Int32Array;
  failures: { dir: number; message?: string; errno: number; syscall: string; path?: string }[];
};

/** Whether the addon lists directories itself (Linux); elsewhere src/tree/list-dir.ts does, in JS. */
export function hasListDirPairs(): boolean {
  // arb diff needs nothing else of the addon: without it, the walk lists in JS.
  return offers('listDirPairs');
}

/**
 * Lists each directory `dirs[d]` (its path, one character per byte) if it is the one with device
 * `ids[2d]` and inode `ids[2d + 1]`
 * (opened without following a link), each entry stat'ed relative to it, on a few threads, and
 * pairs them: `pairs[2p]` and `pairs[2p + 1]` are pair p's base and fork directories (-1: none).
 * A directory that is another one now has 'other' as its problem; one that cannot be listed, a
 * Node-style error (code, syscall, path).
 */
export function listDirPairs(dirs: string[], ids: Float64Array, pairs: Int32Array, trustedUntilMs: number): DirPairsListing {
  // Each path ended by a NUL, all made bytes at once (one character per byte).
  const paths = Buffer.from(dirs.length ? `${dirs.join('\0')}\0` : '', 'latin1');
  const r = required('listDirPairs')(paths, ids, pairs, trustedUntilMs);
  const problem: DirPairsListing['problem'] = new Array(dirs.length).fill(undefined);
  for (let d = 0; d < dirs.length; d++) if (r.outcome[d] === -1) problem[d] = 'other';
  for (const f of r.failures) problem[f.dir] = addonError(f);
  const names = r.names.split('\0');
  names.pop();
  return { problem, start: r.start, names, mode: r.mode, size: r.size, mtimeMs: r.mtimeMs, ctimeMs: r.ctimeMs, dev: r.dev, ino: r.ino, newest: r.newest };
}

// --- where processes are (src/tree/processes.ts) ------------------------------------------------

/** Whether the addon reads /proc itself (Linux). */
export function hasProcessPlaces(): boolean {
  return offers('processPlaces');
}

/**
 * Each running process's working directory, root and open files, as far as /proc lets this user
 * see: the pid and the place's bytes (readlink's), place by place.
 */
export function processPlaces(): { pid: number; place: Buffer }[] {
  let r: { pids: Int32Array; places: Buffer };
  try {
    r = required('processPlaces')();
  } catch (err) {
    throw addonError(err);
  }
  const out: { pid: number; place: Buffer }[] = [];
  for (let i = 0, at = 0; i < r.pids.length; i++) {
    const end = r.places.indexOf(0, at);
    out.push({ pid: r.pids[i], place: r.places.subarray(at, end) });
    at = end + 1;
  }
  return out;
}

// --- removing a tree (posix/remove_tree.cc) -----------------------------------------------------

/** removed; gone (nothing there); not-directory (a link or a file there: left); other (not the directory expected: left). */
export type RemoveTreeOutcome = 'removed' | 'gone' | 'not-directory' | 'other';

/** Whether the addon removes trees itself (it does wherever it is built). */
export function hasRemoveTree(): boolean {
  return offers('removeTree');
}

/**
 * Removes the directory `name` in `parent` and everything in it, walking by descriptors: never
 * through a link, never into another file system. With `expect`, only if it is that directory
 * (device and inode). Throws a Node-style error (code, syscall, path) for the first thing it could
 * not remove, after removing all it could.
 */
export function removeTree(parent: Buffer, name: Buffer, expect?: { dev: number; ino: number }): RemoveTreeOutcome {
  try {
    return required('removeTree')(parent, name, expect?.dev ?? -1, expect?.ino ?? -1);
  } catch (err) {
    throw addonError(err);
  }
}
