// arb diff: the patch of what changed in a fork since it was made (against its base), or between
// two directories. The comparison (src/diff/compare.ts) decides which paths differ, reading only
// files whose size, permissions or time differ; the patch (src/diff/patch.ts) is made from those
// paths alone, in a private repository removed afterwards.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError, systemError } from '../errors';
import { baseOf } from '../fork/names';
import { trustGitOutside, withPrivateRepo } from '../git/private-git';
import { compareTrees, mustBeDirectory } from './compare';
import { RelPath, rootBytes } from './paths';
import { makePatch } from './patch';

export interface DiffOptions {
  /** The old side: a fork's base, or DIR1. */
  base: string;
  /** The new side: the fork, or DIR2. */
  fork: string;
  /** A fork and its base: files whose size, mode and time match are not read. */
  trustTimes: boolean;
  /** Put before every path in the patch: see applyPrefix(). */
  prefix?: RelPath;
  /** The top of the repository both lie in, whose .gitignore files above them count too. */
  outerTop?: string;
  warn?: (message: string) => void;
}

/** The two sides of `arb diff FORK` or `arb diff DIR1 DIR2`, checked to be directories. */
export interface Sides {
  base: string;
  fork: string;
  trustTimes: boolean;
  prefix: RelPath;
  outerTop?: string;
}

function isGitTop(dir: string): boolean {
  try {
    const st = fs.lstatSync(path.join(dir, '.git'));
    return st.isDirectory() || st.isFile();
  } catch {
    return false;
  }
}

/**
 * Where the paths of a fork's patch start. `git apply` takes the paths of a `diff --git` patch
 * as relative to the top of the repository it runs in, and silently skips those outside the
 * directory it runs in. So when the forked directory lies inside a repository but is not its
 * top (a package of a monorepo), its patch names files from that top (`pkg/src/main.c`), as
 * `git diff` would, and applies in the directory or anywhere above it in the repository. The
 * directory is the fork's sibling whose name the fork's extends (`pkg` for `pkg.1`); the
 * repository is found by `.git` alone, never reading it. Nothing is read if the base has its
 * own `.git`: the directory was a repository's top.
 */
export function applyPrefix(fork: string, base: string): RelPath {
  if (isGitTop(base)) return '';
  const parent = path.dirname(path.resolve(fork));
  const name = path.basename(path.resolve(fork));
  let original: string | undefined;
  for (let i = name.lastIndexOf('.'); i > 0; i = name.lastIndexOf('.', i - 1)) {
    const candidate = name.slice(0, i);
    try {
      if (fs.statSync(path.join(parent, candidate)).isDirectory()) {
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
  const rel = path.relative(top, path.join(parent, original));
  return Buffer.from(`${rel}/`).toString('latin1');
}

/**
 * The top of the repository a fork and its base lie in, when the forked directory was not a
 * repository's top itself (the base has no `.git`): found by `.git` alone, never read, looking no
 * further up than the file system the fork is on, as git does. Its .gitignore files above the
 * fork count for the fork as they did for the directory (`node_modules/` at a monorepo's top).
 */
export function enclosingRepoTop(fork: string, base: string): string | undefined {
  if (isGitTop(base)) return undefined;
  const parent = path.dirname(path.resolve(fork));
  let dev: number;
  try {
    dev = fs.statSync(parent).dev;
  } catch {
    return undefined;
  }
  for (let top = parent; ; top = path.dirname(top)) {
    try {
      if (fs.statSync(top).dev !== dev) return undefined;
    } catch {
      return undefined;
    }
    if (isGitTop(top)) return top;
    if (path.dirname(top) === top) return undefined;
  }
}

export function sidesOf(first: string, second?: string): Sides {
  if (second !== undefined) {
    mustBeDirectory(first, 'DIR1');
    mustBeDirectory(second, 'DIR2');
    return { base: first, fork: second, trustTimes: false, prefix: '' };
  }
  mustBeDirectory(first, 'the fork');
  const base = baseOf(first);
  let st: fs.Stats;
  try {
    st = fs.statSync(base);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ArbError('ARB_NO_BASE', `'${first}' has no base: '${base}' does not exist`, {
        hint: 'arb diff FORK takes a fork made by arb fork; to compare two directories, give both: arb diff DIR1 DIR2',
      });
    }
    throw systemError('read the base', base, err);
  }
  if (!st.isDirectory()) throw new ArbError('ARB_NOT_DIRECTORY', `the base '${base}' of '${first}' is not a directory`);
  return { base, fork: first, trustTimes: true, prefix: applyPrefix(first, base), outerTop: enclosingRepoTop(first, base) };
}

/** The patch from `base` to `fork` (empty when nothing that counts differs). */
export async function diffTrees(options: DiffOptions): Promise<Buffer> {
  trustGitOutside([options.base, options.fork]);
  return withPrivateRepo(async (repo) => {
    const { changes } = await compareTrees(options.base, options.fork, { repo, warn: options.warn, trustTimes: options.trustTimes, outerTop: options.outerTop });
    const base = { root: options.base, bytes: rootBytes(options.base) };
    const fork = { root: options.fork, bytes: rootBytes(options.fork) };
    return makePatch(repo, base, fork, changes, options.prefix ?? '');
  });
}
