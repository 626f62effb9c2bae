// arb diff: the patch of what changed in a fork since it was made (against its base), or between
// two directories. The comparison (src/tree/compare.ts) decides which paths differ, reading only
// files whose size, permissions or time differ; the patch (src/diff/patch.ts) is made from those
// paths alone, in a private repository removed afterwards.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError, systemError } from '../errors';
import { withPrivateRepo } from '../git/private-git';
import { compareTrees, mustBeDirectory } from '../tree/compare';
import { RelPath, baseOf, rootBytes } from '../tree/paths';
import { applyPrefix, enclosingRepoTop } from '../tree/repo';
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
  return withPrivateRepo(async (repo) => {
    const { changes } = await compareTrees(options.base, options.fork, { repo, warn: options.warn, trustTimes: options.trustTimes, outerTop: options.outerTop });
    const base = { root: options.base, bytes: rootBytes(options.base) };
    const fork = { root: options.fork, bytes: rootBytes(options.fork) };
    return makePatch(repo, base, fork, changes, options.prefix ?? '');
  });
}
