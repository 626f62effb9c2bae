// arb fork as a library call: checks the input, asks git what to leave out, reserves the names,
// and has the native engine clone the directory to the base and the base to the fork in one
// pass. Whatever fails after the names are reserved, both are removed: a half-made fork or base
// is never left behind, and the directory itself is only ever read.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { visible } from '../tree/paths';
import { ArbError, errnoName, systemError } from '../errors';
import { trustGitOutside } from '../git/private-git';
import { isInside } from '../paths/inside';
import { CloneResult, cloneTree } from '../native';
import { describeGitFailure, ignoredPathBuffers } from './ignore';
import { ForkPaths, baseOf, checkNameLength, forkPathsOf, reserveNextFork, reservePaths, validateForkName } from './names';
import { removeTree } from './remove';

export interface ForkOptions {
  /** The directory to fork; the working directory by default. */
  dir?: string;
  /** Where the fork goes (must not exist); its base is `.NAME.base` beside it. */
  dest?: string;
  /** The fork is `DIR.NAME` rather than `DIR.N`. Ignored with `dest`. */
  name?: string;
  /** Fork what .gitignore files ignore too. */
  noIgnore?: boolean;
  /** Where warnings and notes go (git could not say what is ignored; sockets left out). */
  warn?: (message: string) => void;
  /** Report progress on stderr, if the fork takes over a second and stderr is a terminal. */
  progress?: boolean;
  /** Stops the fork part way; the half-made fork and base are removed, and fork() rejects. */
  signal?: AbortSignal;
}

export interface ForkResult {
  /** The directory forked (its real path). */
  source: string;
  /** The fork. */
  fork: string;
  /** The fork's base, as the directory was when forked. */
  base: string;
  stats: CloneResult;
}

function defaultWarn(message: string): void {
  process.stderr.write(`arb fork: ${message}\n`);
}

/** The directory to fork, as its real path; a clear error if it is missing or not a directory. */
function resolveSource(dir: string): string {
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (err) {
    const code = errnoName(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ArbError('ARB_NOT_FOUND', `cannot fork '${dir}': no such directory`, { hint: 'check the path', path: dir, cause: err });
    }
    throw systemError('fork', dir, err);
  }
  if (!st.isDirectory()) {
    throw new ArbError('ARB_NOT_DIRECTORY', `cannot fork '${dir}': not a directory`, { hint: 'arb fork forks a directory; give the directory the file is in', path: dir });
  }
  const real = fs.realpathSync(dir);
  if (path.dirname(real) === real) {
    throw new ArbError('ARB_BAD_NAME', `cannot fork '${dir}': it is the root directory, which has nothing beside it`, { hint: 'give DEST, or fork a directory below /' });
  }
  return real;
}

/** Where the fork and base go when DEST is given, checked but not made. */
function destPaths(source: string, dest: string): ForkPaths {
  const resolved = path.resolve(dest);
  const parent = path.dirname(resolved);
  let st: fs.Stats;
  try {
    st = fs.statSync(parent);
  } catch (err) {
    throw new ArbError('ARB_NOT_FOUND', `cannot fork to '${dest}': its directory '${parent}' does not exist`, { hint: 'make it first, or choose another DEST', cause: err, path: parent });
  }
  if (!st.isDirectory()) throw new ArbError('ARB_NOT_DIRECTORY', `cannot fork to '${dest}': '${parent}' is not a directory`, { path: parent });
  const fork = path.join(fs.realpathSync(parent), path.basename(resolved));
  if (isInside(fork, source, 'lexical')) {
    throw new ArbError('ARB_BAD_NAME', `cannot fork '${source}' to '${dest}': the fork would be inside the directory it forks`, {
      hint: 'choose a DEST outside it',
    });
  }
  return { fork, base: baseOf(fork) };
}

/**
 * Forks a directory: `DIR.N` beside it (or `DIR.NAME`, or `dest`), with its base `.DIR.N.base`.
 * Resolves with where they are and what was cloned; rejects with an ArbError, having left
 * nothing behind.
 */
export async function fork(options: ForkOptions = {}): Promise<ForkResult> {
  const warn = options.warn ?? defaultWarn;
  const source = resolveSource(path.resolve(options.dir ?? process.cwd()));
  trustGitOutside([source]);

  let planned: ForkPaths | undefined;
  if (options.dest !== undefined) {
    planned = destPaths(source, options.dest);
  } else if (options.name !== undefined) {
    validateForkName(options.name);
    planned = forkPathsOf(source, options.name);
  }
  if (planned) checkNameLength(planned);

  // Asked before anything is made, so that a slow git leaves no empty fork meanwhile.
  let skip: Buffer[] = [];
  if (!options.noIgnore) {
    try {
      skip = await ignoredPathBuffers(source);
    } catch (err) {
      warn(`warning: cannot tell what git ignores in '${source}' (${visible(describeGitFailure(err))}): forking everything`);
      skip = [];
    }
  }
  options.signal?.throwIfAborted();

  // A numbered name too long for the file system fails in mkdir, which says so.
  const paths = planned ? reservePaths(planned) : reserveNextFork(source);

  const cancel = new Int32Array(new SharedArrayBuffer(4));
  const onAbort = () => Atomics.store(cancel, 0, 1);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  const display = options.progress ? startProgress(paths.fork) : undefined;
  let stats: CloneResult;
  try {
    stats = await cloneTree({
      source,
      base: paths.base,
      fork: paths.fork,
      skip,
      cancel,
      onProgress: display?.update,
    });
  } catch (err) {
    display?.stop();
    const left = [paths.fork, paths.base].filter((p) => !tryRemove(p));
    if (left.length > 0) {
      // Rare (the half-made tree could not be removed): say what is left rather than hide it.
      warn(`warning: could not remove ${left.map((p) => `'${p}'`).join(' and ')}: remove ${left.length > 1 ? 'them' : 'it'} by hand (rm -rf)`);
    }
    if (errnoName(err) === 'ECANCELED') {
      throw new ArbError('ARB_CLONE', `fork of '${source}' stopped: removed '${paths.fork}' and its base`, { cause: err, exitCode: 130 });
    }
    throw cloneError(source, paths, err);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
  display?.stop();

  if (stats.leftOut.length > 0) {
    const shown = stats.leftOut.slice(0, 5).map((l) => `'${visible(l.path)}' (${l.kind})`);
    const more = stats.leftOut.length > 5 ? ` and ${stats.leftOut.length - 5} more` : '';
    warn(`note: left out ${shown.join(', ')}${more}: sockets and devices are not forked`);
  }
  return { source, fork: paths.fork, base: paths.base, stats };
}

const DOING: Record<string, string> = {
  open: 'opening',
  fstat: 'reading',
  fstatat: 'reading',
  getdents64: 'listing',
  readlink: 'reading the link',
  read: 'reading',
  write: 'writing',
  copy_file_range: 'writing',
  'ioctl(FICLONE)': 'cloning to',
  mkdir: 'making',
  mkfifo: 'making',
  symlink: 'making the link',
  fchmod: 'setting the mode of',
  fchmodat: 'setting the mode of',
  futimens: 'setting the times of',
  utimensat: 'setting the times of',
  pthread_create: 'starting threads for',
};

function tryRemove(p: string): boolean {
  try {
    removeTree(p);
    return true;
  } catch {
    return false;
  }
}

/** The clone failed part way (both already removed): what, where, and what to do. */
function cloneError(source: string, paths: ForkPaths, err: unknown): ArbError {
  const e = err as { syscall?: string; path?: string };
  const inner = systemError(e.syscall ?? 'clone', e.path ?? source, err);
  const what = inner.message.replace(/^.*?': /, '');
  const where = `${DOING[e.syscall ?? ''] ?? e.syscall ?? 'cloning'} '${e.path === undefined ? source : visible(e.path)}'`;
  return new ArbError('ARB_CLONE', `cannot fork '${source}' to '${paths.fork}': ${what} ${where}; removed the half-made fork and base`, {
    cause: err,
    errno: inner.errno,
    path: e.path,
    hint: inner.hint,
  });
}

interface ProgressDisplay {
  update(p: { files: number; bytes: number }): void;
  stop(): void;
}

/** After a second, a line on stderr (a terminal) with the files and bytes cloned so far. */
function startProgress(fork: string): ProgressDisplay | undefined {
  if (!process.stderr.isTTY) return undefined;
  const started = Date.now();
  const delay = 1000;
  let shown = false;
  return {
    update({ files, bytes }) {
      if (Date.now() - started < delay) return;
      shown = true;
      const secs = ((Date.now() - started) / 1000).toFixed(0);
      process.stderr.write(`\r\x1b[Kforking to ${fork}: ${files.toLocaleString('en-US')} files, ${formatBytes(bytes)} (${secs} s)`);
    },
    stop() {
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

export function formatBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}
