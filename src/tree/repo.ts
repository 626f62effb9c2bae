// Which directory is a repository, decided as git decides it, without running git there: arb
// diff prefixes a fork's patch with the directory's path in the repository it lies in, counts the
// .gitignore files above it, and reads the index and refs of the repositories it compares.
//
// A `.git` entry alone is not a repository: any user can make an empty `/tmp/.git`, and a patch
// whose paths start from there has `git apply` write files in the wrong place. Git takes a `.git`
// directory only if it holds a HEAD that names a ref or an object, an `objects` and a `refs`
// directory (in its common directory, for a worktree); a `.git` file only if it says `gitdir:
// PATH` of such a directory; and (safe.directory) only one owned by the user running git, unless
// the user's git configuration says otherwise. Paths are bytes, worked on as latin1 strings.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { gitProgram } from '../git/private-git';
import { RelPath, Root, realRootBytes, rootBytes } from './paths';

const P = path.posix;

function b(text: string): Buffer {
  return Buffer.from(text, 'latin1');
}

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(b(p));
  } catch {
    return undefined;
  }
}

/** A small regular file's content as latin1 (never through a link), or undefined. */
export function readSmall(p: string, max = 4096): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(b(p), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > max) return undefined;
    return fs.readFileSync(fd).toString('latin1');
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** A repository's directories: its own (HEAD, index) and the common one (objects, refs). */
export interface GitDirs {
  /** The directory `.git` is or names; latin1. */
  gitDir: string;
  /** Where objects and refs are: gitDir, or what its `commondir` names (a worktree's). */
  commonDir: string;
}

/** git's is_git_directory(): HEAD names a ref or an object; objects/ and refs/ are there. */
function validGitDir(gitDir: string): GitDirs | undefined {
  const common = readSmall(P.join(gitDir, 'commondir'));
  const commonDir = common === undefined ? gitDir : P.resolve(gitDir, common.replace(/\n$/, ''));
  const isDir = (p: string) => {
    try {
      return fs.statSync(b(p)).isDirectory();
    } catch {
      return false;
    }
  };
  if (!isDir(P.join(commonDir, 'objects')) || !isDir(P.join(commonDir, 'refs'))) return undefined;
  const head = P.join(gitDir, 'HEAD');
  const st = lstat(head);
  if (!st) return undefined;
  if (st.isSymbolicLink()) {
    // An old-style HEAD: a link into refs/.
    try {
      if (!fs.readlinkSync(b(head), { encoding: 'buffer' }).toString('latin1').startsWith('refs/')) return undefined;
    } catch {
      return undefined;
    }
  } else {
    const text = readSmall(head);
    if (text === undefined || !(/^ref: refs\//.test(text) || /^[0-9a-f]{40}(?:[0-9a-f]{24})?\s*$/.test(text))) return undefined;
  }
  return { gitDir, commonDir };
}

/** What `.git` in `top` is, if git would take it for a repository: its directories. */
type DotGit = { kind: 'repo'; dirs: GitDirs } | { kind: 'none' } | { kind: 'broken' };

function dotGitAt(top: string): DotGit {
  const dotgit = P.join(top, '.git');
  const st = lstat(dotgit);
  if (!st) return { kind: 'none' };
  if (st.isDirectory()) {
    const dirs = validGitDir(dotgit);
    return dirs ? { kind: 'repo', dirs } : { kind: 'none' };
  }
  if (!st.isFile()) return { kind: 'none' };
  // A worktree's or a submodule's `.git` file. One git cannot read stops git there (it dies).
  const m = /^gitdir: (.+?)\r?\n?$/.exec(readSmall(dotgit) ?? '');
  if (!m) return { kind: 'broken' };
  const dirs = validGitDir(P.resolve(top, m[1]));
  return dirs ? { kind: 'repo', dirs } : { kind: 'broken' };
}

/** safe.directory from the user's own git configuration (system, global), read once. */
let safeDirectories: string[] | undefined;
function safeDirectoryList(): string[] {
  if (safeDirectories) return safeDirectories;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('GIT_') || k === 'GIT_CONFIG_GLOBAL' || k === 'GIT_CONFIG_SYSTEM' || k === 'GIT_CONFIG_NOSYSTEM') env[k] = v;
  }
  // Outside any repository (cwd /, no GIT_DIR), git reads only the system and global files:
  // configuration, never a program.
  // The git arb runs, never one on a PATH entry a confined command could write (issue 13); none
  // found reads as no safe.directory.
  let git: string | undefined;
  try {
    git = gitProgram();
  } catch {
    git = undefined;
  }
  const r = git ? spawnSync(git, ['config', '--includes', '--get-all', 'safe.directory'], { cwd: '/', env: { ...env, GIT_CEILING_DIRECTORIES: '/' }, encoding: 'latin1' }) : undefined;
  const values = r?.status === 0 ? r.stdout.split('\n').filter((l) => l !== '') : [];
  // An empty value resets the list, as in git.
  const last = values.lastIndexOf('');
  safeDirectories = values.slice(last + 1);
  return safeDirectories;
}

function ownedByUser(p: string): boolean {
  const uid = process.geteuid?.();
  if (uid === undefined) return true;
  let owner: number;
  try {
    owner = fs.lstatSync(b(p)).uid;
  } catch {
    return false;
  }
  if (owner === uid) return true;
  // As git: root running under sudo may use the invoking user's repositories.
  const sudo = process.env.SUDO_UID;
  return uid === 0 && sudo !== undefined && /^\d+$/.test(sudo) && Number(sudo) === owner;
}

/** git's ensure_valid_ownership(): the work tree and git directory are the user's, or safe.directory says so. */
function trustedByGit(top: string, dirs: GitDirs): boolean {
  if (ownedByUser(top) && ownedByUser(P.join(top, '.git')) && ownedByUser(dirs.gitDir)) return true;
  let real = top;
  try {
    real = fs.realpathSync.native(b(top), { encoding: 'buffer' }).toString('latin1');
  } catch {
    /* as named */
  }
  return safeDirectoryList().some((s) => s === '*' || P.resolve(s) === real || (s.endsWith('/*') && real.startsWith(s.slice(0, -1))));
}

/**
 * The repository whose top is `top` (bytes, absolute), if git would use it: its directories.
 * `checkOwner` applies safe.directory (for repositories git would look up from a directory;
 * a fork's own copy of the directory's repository is the user's).
 */
export function repositoryAt(top: Root, checkOwner = true): GitDirs | undefined {
  const t = rootBytes(top).toString('latin1');
  const d = dotGitAt(t);
  if (d.kind !== 'repo') return undefined;
  return !checkOwner || trustedByGit(t, d.dirs) ? d.dirs : undefined;
}

/**
 * Whether the forked directory was a repository's top: its base (a copy of it) has a repository
 * of its own, or a `.git` file (a worktree's or a submodule's, which may name its git directory
 * relative to the directory, not to the base).
 */
function baseWasRepoTop(base: Root): boolean {
  const dotgit = lstat(`${rootBytes(base).toString('latin1')}/.git`);
  return !!dotgit?.isFile() || repositoryAt(base, false) !== undefined;
}

/**
 * Where the paths of a fork's patch start. `git apply` takes the paths of a `diff --git` patch
 * as relative to the top of the repository it runs in, and silently skips those outside the
 * directory it runs in. So when the forked directory lies inside a repository but is not its
 * top (a package of a monorepo), its patch names files from that top (`pkg/src/main.c`), as
 * `git diff` would, and applies in the directory or anywhere above it in the repository. The
 * directory is the fork's sibling whose name the fork's extends (`pkg` for `pkg.1`). Nothing is
 * looked up if the base has its own repository: the directory was a repository's top.
 */
export function applyPrefix(fork: Root, base: Root): RelPath {
  if (baseWasRepoTop(base)) return '';
  const resolved = realRootBytes(fork).toString('latin1');
  const parent = P.dirname(resolved);
  const name = P.basename(resolved);
  let original: string | undefined;
  for (let i = name.lastIndexOf('.'); i > 0; i = name.lastIndexOf('.', i - 1)) {
    const candidate = name.slice(0, i);
    try {
      if (fs.statSync(b(P.join(parent, candidate))).isDirectory()) {
        original = candidate;
        break;
      }
    } catch {
      /* not this one */
    }
  }
  if (original === undefined) return '';
  const top = enclosingRepoTop(fork, base);
  if (top === undefined) return '';
  return `${P.relative(top.toString('latin1'), P.join(parent, original))}/`;
}

function ceilings(): string[] {
  return (process.env.GIT_CEILING_DIRECTORIES ?? '')
    .split(':')
    .filter((c) => c.startsWith('/'))
    .map((c) => P.resolve(Buffer.from(c).toString('latin1')));
}

/**
 * The top of the repository a fork and its base lie in, when the forked directory was not a
 * repository's top itself (the base has no repository): looked up from the fork's parent as git
 * does, no further than the file system the fork is on and the user's GIT_CEILING_DIRECTORIES;
 * a `.git` git would not use is passed over (a directory that is no repository) or stops the
 * search (a `.git` file git cannot read, a repository of another user). Its .gitignore files
 * above the fork count for the fork as they did for the directory (`node_modules/` at a
 * monorepo's top).
 */
export function enclosingRepoTop(fork: Root, base: Root): Buffer | undefined {
  if (baseWasRepoTop(base)) return undefined;
  const parent = P.dirname(realRootBytes(fork).toString('latin1'));
  let dev: number;
  try {
    dev = fs.statSync(b(parent)).dev;
  } catch {
    return undefined;
  }
  const ceiling = ceilings();
  for (let top = parent; ; top = P.dirname(top)) {
    try {
      if (fs.statSync(b(top)).dev !== dev && process.env.GIT_DISCOVERY_ACROSS_FILESYSTEM !== '1') return undefined;
    } catch {
      return undefined;
    }
    const d = dotGitAt(top);
    if (d.kind === 'broken') return undefined;
    if (d.kind === 'repo') return trustedByGit(top, d.dirs) ? b(top) : undefined;
    if (P.dirname(top) === top || ceiling.includes(P.dirname(top))) return undefined;
  }
}
