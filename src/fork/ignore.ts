// What a fork leaves out: what .gitignore files ignore and git does not track.
//
// Git is asked, but never in the directory's own repository: its .git/config, hooks and index
// extensions could name programs git runs (core.fsmonitor, core.hooksPath…), and the directory
// may be a fork a confined command wrote to. So git runs in a private repository
// (withPrivateRepo: no system or global config, no hooks, no fsmonitor), looking at the
// directory as its work tree, reading only:
//   - .gitignore files (--exclude-per-directory; not info/exclude, not core.excludesFile);
//   - a copy of the repository's index, to know what is tracked (a split index's shared part
//     copied beside it; a sparse index expanded from the repository's objects, read-only).
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError } from '../errors';
import { GitResult, PrivateRepo, withPrivateRepo } from '../git/private-git';

/** Where a directory's repository is, as far as the fork needs it. */
export interface RepoLocation {
  /** The work tree's top: the directory holding `.git`. */
  root: string;
  /** The directory with the index (.git, or .git/worktrees/X, or .git/modules/X). */
  gitDir: string;
  /** The directory with objects (commondir for a worktree). */
  commonDir: string;
}

/**
 * The repository `dir` is in: the nearest directory at or above it with a `.git` directory, or
 * a `.git` file saying `gitdir: …` (a worktree or a submodule). Undefined outside any.
 */
export function findRepository(dir: string): RepoLocation | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const dotGit = path.join(d, '.git');
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(dotGit);
    } catch {
      st = undefined;
    }
    if (st?.isDirectory()) return { root: d, gitDir: dotGit, commonDir: commonDirOf(dotGit) };
    if (st?.isFile()) {
      const gitDir = readGitFile(dotGit);
      if (gitDir) return { root: d, gitDir, commonDir: commonDirOf(gitDir) };
    }
    if (path.dirname(d) === d) return undefined;
  }
}

function readGitFile(file: string): string | undefined {
  try {
    const text = readSmallRegularFile(file, 64 * 1024).toString('utf8');
    const m = /^gitdir:[ \t]*(.+?)[ \t]*\r?$/m.exec(text);
    return m ? path.resolve(path.dirname(file), m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function commonDirOf(gitDir: string): string {
  try {
    const text = readSmallRegularFile(path.join(gitDir, 'commondir'), 64 * 1024).toString('utf8').trim();
    return text ? path.resolve(gitDir, text) : gitDir;
  } catch {
    return gitDir;
  }
}

/**
 * Reads a file only if it is a regular file, not through a link at its last component, and
 * never blocking on a FIFO planted in its place.
 */
function readSmallRegularFile(file: string, limit: number): Buffer {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error(`${file} is not a regular file`);
    if (st.size > limit) throw new Error(`${file} is too large`);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Copies a regular file (the index) byte for byte, refusing links, FIFOs and devices. */
function copyRegularFile(from: string, to: string): void {
  const fd = fs.openSync(from, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) throw new Error(`${from} is not a regular file`);
    const out = fs.openSync(to, 'wx', 0o600);
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0; ) fs.writeSync(out, buf, 0, n);
    } finally {
      fs.closeSync(out);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Puts a copy of the repository's index (and, for a split index, its shared parts) into the
 * private repository. Returns the copy's path, or undefined if the repository has no index
 * yet (nothing is tracked).
 */
function copyIndex(repo: PrivateRepo, location: RepoLocation): string | undefined {
  const index = path.join(location.gitDir, 'index');
  if (!fs.existsSync(index)) return undefined;
  const copy = path.join(repo.gitDir, 'index');
  copyRegularFile(index, copy);
  // A split index names its shared part, which git looks for in its own git directory.
  for (const dir of new Set([location.gitDir, location.commonDir])) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir).filter((n) => /^sharedindex\.[0-9a-f]{40,64}$/.test(n));
    } catch {
      /* no shared index */
    }
    for (const name of names) {
      const target = path.join(repo.gitDir, name);
      if (!fs.existsSync(target)) copyRegularFile(path.join(dir, name), target);
    }
  }
  return copy;
}

/**
 * Git's list, trusted only if git said nothing went wrong: where it cannot read what it needs
 * (a sparse index's trees, say) it may still exit 0, having taken tracked files for untracked.
 */
function listed(result: GitResult): Buffer[] {
  if (/^(error|fatal):/m.test(result.stderr)) {
    throw new ArbError('ARB_GIT', `git ls-files: ${result.stderr.trim().split('\n').slice(-2).join('; ')}`);
  }
  return collapse(splitZ(result.stdout));
}

/** Splits git's -z output into paths, as raw bytes. */
function splitZ(out: Buffer): Buffer[] {
  const paths: Buffer[] = [];
  let start = 0;
  for (let i = out.indexOf(0); i !== -1; i = out.indexOf(0, start)) {
    if (i > start) paths.push(out.subarray(start, i));
    start = i + 1;
  }
  if (start < out.length) paths.push(out.subarray(start));
  return paths;
}

const SLASH = 0x2f;

/**
 * Keeps what to leave out: git lists a directory whose files are all ignored as `dir/` and its
 * files too; such a directory is kept (empty, as its pattern does not ignore it) and only its
 * files are left out. A directory listed alone (`node_modules/`) is left out whole. `./` (the
 * directory itself) is never left out.
 */
function collapse(paths: Buffer[]): Buffer[] {
  const sorted = [...paths].sort(Buffer.compare);
  const out: Buffer[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i];
    if (p.equals(Buffer.from('./'))) continue;
    if (p[p.length - 1] === SLASH) {
      const next = sorted[i + 1];
      if (next && next.length > p.length && next.subarray(0, p.length).equals(p)) continue;
    }
    out.push(p);
  }
  return out;
}

/**
 * The paths in `dir` (relative, as raw bytes; directories with a trailing '/') that a fork
 * leaves out. Throws if git cannot say (not installed, a corrupt index…).
 */
export async function ignoredPathBuffers(dir: string): Promise<Buffer[]> {
  const resolved = fs.realpathSync(dir);
  const location = findRepository(resolved);
  return withPrivateRepo(async (repo) => {
    try {
      return await listIgnored(repo, resolved, location);
    } catch (err) {
      // Git names the index copy; the user knows the repository's own.
      if (err instanceof ArbError && location) {
        const own = path.join(location.gitDir, 'index');
        throw new ArbError(err.code, err.message.split(path.join(repo.gitDir, 'index')).join(own), { cause: err, hint: err.hint });
      }
      throw err;
    }
  });
}

async function listIgnored(repo: PrivateRepo, resolved: string, location: RepoLocation | undefined): Promise<Buffer[]> {
  const listArgs = ['ls-files', '-z', '--others', '--ignored', '--directory', '--exclude-per-directory=.gitignore'];
  const nowhere = path.join(repo.gitDir, 'no-index');
  if (location && location.root !== resolved) {
    // A subdirectory: it goes by the .gitignore files above it too, unless it is ignored
    // itself (then, as a directory of its own, by its own only).
    const indexFile = copyIndex(repo, location) ?? nowhere;
    const objectDirectory = objectDirectoryOf(location);
    const common = { workTree: location.root, indexFile, objectDirectory };
    const check = await repo.git(['-C', resolved, 'check-ignore', '-q', '.'], { ...common, okStatuses: [0, 1] });
    if (check.status === 1) {
      return listed(await repo.git(['-C', resolved, ...listArgs], common));
    }
    return listed(await repo.git(listArgs, { workTree: resolved, indexFile: nowhere }));
  }
  if (location) {
    const indexFile = copyIndex(repo, location) ?? nowhere;
    return listed(await repo.git(listArgs, { workTree: resolved, indexFile, objectDirectory: objectDirectoryOf(location) }));
  }
  // Not in a repository: its own .gitignore files, nothing tracked.
  return listed(await repo.git(listArgs, { workTree: resolved, indexFile: nowhere }));
}

/** The repository's objects, which git reads (never writes) to expand a sparse index. */
function objectDirectoryOf(location: RepoLocation): string | undefined {
  const objects = path.join(location.commonDir, 'objects');
  try {
    return fs.statSync(objects).isDirectory() ? objects : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The paths in `dir` that a fork leaves out: relative, directories collapsed with a trailing
 * '/' ('node_modules/'). Throws (an ArbError 'ARB_GIT') if git cannot say, so that the caller can
 * warn and fork everything. Names that are not UTF-8 are decoded lossily here; the fork itself
 * uses ignoredPathBuffers, which keeps their bytes.
 */
export async function ignoredPaths(dir: string): Promise<string[]> {
  return (await ignoredPathBuffers(dir)).map((b) => b.toString('utf8'));
}

/** Why git could not say what is ignored, for the warning. */
export function describeGitFailure(err: unknown): string {
  if (err instanceof ArbError) return err.message;
  return err instanceof Error ? err.message : String(err);
}
