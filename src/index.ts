// The library: `import { fork, diff, confine, listForks, prune, ArbError } from 'arborinth'`.
// Each function calls the very modules the command line does (src/commands/* are thin layers
// over the same calls), so the library and `arb` cannot drift apart. Every rejection is an
// ArbError with an ARB_* `code`.
import * as path from 'node:path';

import { ArbError, errnoName, isSystemError, systemError } from './errors';
import type { ForkEntry } from './fork/list';
import type { PruneResult } from './fork/prune';
import type { ForkResult } from './fork/fork';

export { ArbError } from './errors';
export type { ArbCode, ArbErrorOptions } from './errors';
export { MAX_NAME_BYTES, validateForkName } from './fork/names';
export type { ForkResult } from './fork/fork';
export type { ForkEntry, ForkStatus } from './fork/list';
export type { KeptReason, PruneResult } from './fork/prune';
export type { CloneResult } from './native';
export type { JailName } from './confine/jail';
export { PRESETS, presetNames } from './confine/presets';
export type { Preset } from './confine/presets';

/** Every failure as an ArbError with a code: system errors get their operation and path. */
function asArbError(err: unknown): ArbError {
  if (err instanceof ArbError) return err;
  if (isSystemError(err) && err.syscall) return systemError(err.syscall, err.path ?? '', err);
  if (isSystemError(err) && errnoName(err)) return systemError('do', String((err as { path?: string }).path ?? ''), err);
  return new ArbError('ARB_INTERNAL', err instanceof Error ? err.message : String(err), { cause: err });
}

async function wrap<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw asArbError(err);
  }
}

// --- fork -------------------------------------------------------------------------------------

/** fork()'s options: those of `arb fork` (src/fork/fork.ts), less the terminal's progress line. */
export type ForkOptions = Omit<import('./fork/fork').ForkOptions, 'progress'>;

/**
 * Forks a directory copy-on-write: `DIR.N` beside it (or `DIR.NAME`, or `dest`) with its base
 * `.DIR.N.base`. Resolves with their paths and what was cloned; on failure nothing is left.
 */
export function fork(options: ForkOptions = {}): Promise<ForkResult> {
  return wrap(async () => {
    const { fork: forkDir } = await import('./fork/fork');
    return forkDir({ ...options, progress: false });
  });
}

// --- diff -------------------------------------------------------------------------------------

export interface DiffOptions {
  /** Where warnings go (e.g. a base whose index git cannot read). Default: stderr. */
  warn?: (message: string) => void;
}

export interface DiffResult {
  /** The patch, in `diff --git` format with binary files, as `git apply` takes it. Bytes: paths
   *  and contents need not be UTF-8. Empty when nothing changed. */
  patch: Buffer;
  /** Whether anything changed (the patch is not empty): `arb diff` exits 1 then, 0 otherwise. */
  changed: boolean;
}

function defaultDiffWarn(message: string): void {
  process.stderr.write(`arb diff: ${message}\n`);
}

/**
 * What changed in a fork since it was made (against its base `.NAME.base`), or, given two
 * directories, from the first to the second. Never runs git in either directory.
 */
export function diff(fork: string, options?: DiffOptions): Promise<DiffResult>;
export function diff(dir1: string, dir2: string, options?: DiffOptions): Promise<DiffResult>;
export function diff(first: string, second?: string | DiffOptions, third?: DiffOptions): Promise<DiffResult> {
  const dir2 = typeof second === 'string' ? second : undefined;
  const options = (typeof second === 'object' ? second : third) ?? {};
  return wrap(async () => {
    const { diffTrees, sidesOf } = await import('./diff/diff');
    const sides = sidesOf(first, dir2);
    const patch = await diffTrees({ ...sides, warn: options.warn ?? defaultDiffWarn });
    return { patch, changed: patch.length > 0 };
  });
}

// --- listForks, prune --------------------------------------------------------------------------

export interface ListOptions {
  warn?: (message: string) => void;
}

/**
 * The forks of a directory (the working directory by default), each with its status: unchanged,
 * only-here (`count` files only there, or `commits`, `branches`, `tags` only in its repository),
 * merged, or base-only; and when it last changed.
 */
export function listForks(dir: string = process.cwd(), options: ListOptions = {}): Promise<ForkEntry[]> {
  return wrap(async () => {
    const list = await import('./fork/list');
    return list.listForks(path.resolve(dir), options);
  });
}

export interface PruneOptions {
  /** Say what would be removed (in `removed`), remove nothing. */
  dryRun?: boolean;
  /** Called with each path as it is removed. */
  onRemove?: (path: string) => void;
  warn?: (message: string) => void;
}

/**
 * Removes the forks of a directory that are unchanged or merged, with their bases, and bases left
 * over, once each has been left alone for an hour. Never a fork with files only there, nor one
 * whose repository holds commits or branches only there, nor one changed in the last hour. Resolves with what was removed and what was kept, and why.
 */
export function prune(dir: string = process.cwd(), options: PruneOptions = {}): Promise<PruneResult> {
  return wrap(async () => {
    const { pruneForks } = await import('./fork/prune');
    return pruneForks(path.resolve(dir), { dryRun: options.dryRun, warn: options.warn }, options.onRemove);
  });
}

// --- confine ----------------------------------------------------------------------------------

export interface ConfineOptions {
  /** The program (looked up on PATH as a shell would) and its arguments. With a preset, the
   *  preset's command by default. */
  command?: string;
  args?: string[];
  /** Run in this directory itself, no fork (`-d`). */
  dir?: string;
  /** The directory to fork (and where relative paths start): the working directory by default. */
  cwd?: string;
  /** How the fork is made: `DIR.NAME`, and whether ignored files are forked too. */
  name?: string;
  noIgnore?: boolean;
  /** Remove the fork and its base once the command has ended. */
  rm?: boolean;
  /** More paths the command may read (`-r`) or write (`-w`). */
  read?: string[];
  write?: string[];
  /** Variables kept although they look secret (`-e`). */
  keepEnv?: string[];
  /** landlock (Linux default), seatbelt (macOS default), bwrap, or none (no isolation: warns). */
  jail?: 'landlock' | 'seatbelt' | 'bwrap' | 'none';
  /** bwrap only: `TYPE:DEST` or `TYPE:SRC:DEST` (ro, rw, tmpfs, dev, proc), in order. */
  mounts?: string[];
  /** claude, codex, opencode, or none; by default the one named like the command, if any. */
  preset?: string;
  /** Only loopback (a network namespace of its own; bwrap: its network namespace). */
  noNetwork?: boolean;
  /** Only these hosts, through confine's proxy (`--allow-host`: HOST, *.DOMAIN, HOST:PORT, @registries). */
  allowHost?: string[];
  /** With allowHost: every connection as JSON lines in this file (`--net-log`). */
  netLog?: string;
  /** The environment the command starts from (secret-looking variables are removed). Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Say on stderr what is granted and how it runs. */
  verbose?: boolean;
  /** How messages on stderr are prefixed. Default: 'arb confine'. */
  program?: string;
}

/**
 * Runs a command confined, as `arb confine` does, and resolves with its exit status (128+N for a
 * signal N; 126/127 reject as ArbError ARB_COMMAND_NOT_EXECUTABLE / ARB_COMMAND_NOT_FOUND). It
 * spawns and waits: unlike the command line it never replaces the calling process. The command
 * shares the caller's stdin, stdout and stderr.
 */
export function confine(options: ConfineOptions): Promise<number> {
  return wrap(async () => {
    const run = await import('./confine/run');
    let command = options.command;
    if (command === undefined && options.preset !== undefined && options.preset !== 'none') {
      const { getPreset } = await import('./confine/presets');
      command = getPreset(options.preset).command;
    }
    if (command === undefined) throw new ArbError('ARB_USAGE', 'confine(): name the command to run (options.command), or a preset');
    return run.confine({
      program: options.program ?? 'arb confine',
      command,
      args: [...(options.args ?? [])],
      dir: options.dir,
      write: [...(options.write ?? [])],
      read: [...(options.read ?? [])],
      name: options.name,
      noIgnore: options.noIgnore ?? false,
      rm: options.rm ?? false,
      verbose: options.verbose ?? false,
      cwd: path.resolve(options.cwd ?? process.cwd()),
      env: options.env ?? process.env,
      keepEnv: [...(options.keepEnv ?? [])],
      noNetwork: options.noNetwork ?? false,
      allowHost: [...(options.allowHost ?? [])],
      netLog: options.netLog,
      landlockOnly: false,
      headless: false,
      jail: options.jail,
      mounts: [...(options.mounts ?? [])],
      preset: options.preset,
      // The library waits for the command rather than becoming it, which would replace the
      // caller's process.
      wait: true,
    });
  });
}
