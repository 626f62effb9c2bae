// The only importer of the addon. The whole native surface is typed here, and every error the
// addon throws (errno, syscall, path) becomes a Node-style error with `code` here.
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

/** The Landlock ruleset and the command to become (or spawn). */
export interface LandlockSpec {
  abi: number;
  /** Rights bitmask handled (so denied unless granted), from src/confine/landlock.ts. */
  handledAccessFs: bigint;
  /** Network rights handled (ABI 4: bind/connect TCP); 0n leaves the network open. */
  handledAccessNet: bigint;
  /** Scopes (ABI 6: abstract unix sockets, signals); 0n for none. */
  scoped: bigint;
  /** Flags for landlock_restrict_self (ABI 7: audit logging); 0 by default. */
  restrictFlags?: number;
  /** Each rule: a path (opened O_PATH) and the rights granted beneath it. A path that is not a
   *  directory gets only the rights a file can have. A path that no longer exists is skipped. */
  rules: { path: string; access: bigint }[];
  /** TCP ports (ABI 4) and the network rights granted on each. */
  netRules?: { port: bigint; access: bigint }[];
  file: string; // absolute path of the program
  argv: string[];
  env: string[]; // NAME=value
  cwd: string;
  /** Descriptors to keep open for the command (besides 0, 1, 2). */
  keepFds?: number[];
  /** User, mount (and PID, network) namespaces entered before Landlock: landlockSpawn only.
   *  Its shape is the hardening layer's (native/linux/layers.h, ParseNamespacePlan). */
  namespaces?: NamespacePlanSpec;
  /** A seccomp filter applied after Landlock (native/linux/layers.h, ParseSeccompPlan). */
  seccomp?: SeccompPlanSpec;
}

/** One step of the mount plan inside the command's mount namespace (see layers.h MountOp). */
export interface MountOpSpec {
  kind: 'bind-rw' | 'bind-ro' | 'mask' | 'tmpfs' | 'devpts' | 'symlink';
  path: string;
  target?: string;
  /** bind-rw/bind-ro: what to bind at `path`, when not `path` itself (the terminal at /dev/console). */
  source?: string;
}

export interface NamespacePlanSpec {
  pid: boolean;
  net: boolean;
  uid: number;
  gid: number;
  readOnlyRoot?: boolean;
  mounts: MountOpSpec[];
  /** --allow-host: a listener on 127.0.0.1:port made inside the network namespace, sent over the
   *  unix socket `socket` (native/linux/proxy_listener.cc). Needs net. */
  proxy?: { port: number; socket: number };
}

export interface SeccompPlanSpec {
  denyTerminalInjection: boolean;
  denyNetwork: boolean;
  /** With denyNetwork: TCP sockets are let through (for Landlock's port rule, --allow-host). */
  allowTcp?: boolean;
}

/** A failure of landlockExec/landlockSpawn: the errno of the step that failed. */
export interface ConfineFailure extends Error {
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
  /** True when the calling thread (landlockExec) or the child was already restricted. */
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
  landlockAbi?(): number;
  landlockExec?(spec: LandlockSpec): never;
  landlockSpawn?(spec: LandlockSpec): number;
  waitPid?(pid: number): Promise<WaitResult>;
  terminalForeground?(): { pgrp: number; foreground: number };
  clonefile?(src: string, dst: string): void;
  inSandbox?(): boolean; // macOS (darwin/sandbox_check.cc)
  // hardening (linux/namespaces.cc, linux/seccomp.cc)
  namespacesProbe?(plan: NamespacePlanSpec): NamespaceProbeResult;
  seccompAvailable?(): boolean;
  // fd passing (posix/fd_passing.cc), for the broker
  unixConnect?(path: string): number;
  sendFds?(fd: number, byte: number, fds: number[]): void;
  recvFds?(fd: number, maxFds: number): ReceivedFds | null;
  socketPair?(): [number, number];
  loopbackListenerIn?(pid: number, port: number): number; // linux/proxy_listener.cc
  // arb diff's walk (linux/list_dir.cc)
  listDir?(path: Buffer, dev: number, ino: number): NativeDirListing;
}

let cached: Addon | undefined;

/** Loads the addon once; if it cannot, the error lists every path tried. */
export function addon(): Addon {
  if (cached) return cached;
  const root = path.resolve(__dirname, '..');
  const candidates = [
    process.env.ARB_ADDON,
    path.join(root, 'build', 'Release', 'arb.node'),
    path.join(root, 'build', 'Debug', 'arb.node'),
  ].filter((p): p is string => Boolean(p));
  const failures: string[] = [];
  for (const candidate of candidates) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      cached = require(candidate) as Addon;
      return cached;
    } catch (err) {
      failures.push(`  ${candidate}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  throw new ArbError('ARB_INTERNAL', `cannot load the native addon; tried:\n${failures.join('\n')}`, {
    hint: 'run `npm install` (or `npm run build`) in the arb checkout to build it',
  });
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
 * Becomes the confined command: Landlock, then execve, in this thread. Returns only by throwing
 * a ConfineFailure; when its `confined` is true this thread is already restricted, so the caller
 * must only report the failure and exit.
 */
export function landlockExec(spec: LandlockSpec): never {
  try {
    return required('landlockExec')(spec);
  } catch (err) {
    throw toSystemError(err);
  }
}

/** Forks a child that enters the namespaces, restricts itself and execs; returns its pid once
 *  execve succeeded, or throws the child's failure (a ConfineFailure). */
export function landlockSpawn(spec: LandlockSpec): number {
  try {
    return required('landlockSpawn')(spec);
  } catch (err) {
    throw toSystemError(err);
  }
}

/** Waits (in a worker thread) for a child of landlockSpawn to end. */
export async function waitPid(pid: number): Promise<WaitResult> {
  try {
    return await required('waitPid')(pid);
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

/** A connected pair of close-on-exec unix stream sockets (--allow-host's listener comes back
 *  over one). */
export function socketPair(): [number, number] {
  try {
    return required('socketPair')();
  } catch (err) {
    throw toSystemError(err);
  }
}

/**
 * A listener on 127.0.0.1:port inside the network namespace of process `pid` (a jail another
 * program made, such as bwrap's), made by a short-lived child that joins it; close-on-exec.
 */
export function loopbackListenerIn(pid: number, port: number): number {
  try {
    return required('loopbackListenerIn')(pid, port);
  } catch (err) {
    throw toSystemError(err);
  }
}

// --- hardening: namespaces and seccomp (src/confine/hardening.ts) ---------------------------

/** What namespacesProbe found: ok, or the step that failed (errno as a code, e.g. 'EPERM'). */
export interface NamespaceProbeResult {
  ok: boolean;
  errno?: number;
  code?: string;
  syscall?: string;
  path?: string;
}

/**
 * Makes the namespaces `plan` describes in a throw-away child, with the very steps confine takes
 * (unshare, id maps, mounts, /proc), and reports whether that worked. Runs nothing else.
 */
export function namespacesProbe(plan: NamespacePlanSpec): NamespaceProbeResult {
  const r = required('namespacesProbe')(plan);
  if (!r.ok && typeof r.errno === 'number') {
    try {
      r.code = getSystemErrorName(-r.errno);
    } catch {
      r.code = `E${r.errno}`;
    }
  }
  return r;
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

// --- arb diff: listing a directory (src/diff/list.ts) ---------------------------------------

/** A directory's entries with what lstat says of each, index by index; names one char per byte. */
export interface DirListing {
  names: string[];
  mode: Uint32Array;
  size: Float64Array;
  mtimeMs: Float64Array;
  ctimeMs: Float64Array;
  dev: Float64Array;
  ino: Float64Array;
}

/** As the addon returns it: the names in one string, each ended by a NUL. */
type NativeDirListing = ({ same: true; names: string } & Omit<DirListing, 'names'>) | { same: false };

/** Whether the addon lists directories itself (Linux); elsewhere src/diff/list.ts does, in JS. */
export function hasListDir(): boolean {
  try {
    return typeof addon().listDir === 'function';
  } catch {
    // arb diff needs nothing else of the addon: without it, the walk lists in JS.
    return false;
  }
}

/**
 * Lists the directory at `dir` if it is the one with device `dev` and inode `ino` (opened without
 * following a link), each entry stat'ed relative to it; undefined if it is another (a link now,
 * or a directory put in its place). Throws a Node-style error (code, syscall, path) otherwise.
 */
export function listDir(dir: Buffer, dev: number, ino: number): DirListing | undefined {
  let r: NativeDirListing;
  try {
    r = required('listDir')(dir, dev, ino);
  } catch (err) {
    // Copied into an Error of this realm: under jest the addon's errors are of another, and
    // toSystemError would not see them as errors with an errno.
    const e = err as { message?: string; errno?: unknown; syscall?: string; path?: string };
    throw toSystemError(typeof e?.errno === 'number' ? Object.assign(new Error(e.message), { errno: e.errno, syscall: e.syscall, path: e.path }) : err);
  }
  if (!r.same) return undefined;
  const names = r.names.split('\0');
  names.pop();
  return { ...r, names };
}
