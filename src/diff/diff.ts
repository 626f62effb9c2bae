// arb diff: the patch of what changed in a fork since it was made (against its base), or between
// two directories. The comparison (src/diff/compare.ts) decides which paths differ, reading only
// files whose size, permissions or time differ; the patch (src/diff/patch.ts) is made from those
// paths alone, in a private repository removed afterwards.
import * as fs from 'node:fs';

import { ArbError, systemError } from '../errors';
import { baseOf } from '../fork/names';
import { withPrivateRepo } from '../git/private-git';
import { compareTrees, mustBeDirectory } from './compare';
import { rootBytes } from './paths';
import { makePatch } from './patch';

export interface DiffOptions {
  /** The old side: a fork's base, or DIR1. */
  base: string;
  /** The new side: the fork, or DIR2. */
  fork: string;
  /** A fork and its base: files whose size, mode and time match are not read. */
  trustTimes: boolean;
  warn?: (message: string) => void;
}

/** The two sides of `arb diff FORK` or `arb diff DIR1 DIR2`, checked to be directories. */
export function sidesOf(first: string, second?: string): { base: string; fork: string; trustTimes: boolean } {
  if (second !== undefined) {
    mustBeDirectory(first, 'DIR1');
    mustBeDirectory(second, 'DIR2');
    return { base: first, fork: second, trustTimes: false };
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
  return { base, fork: first, trustTimes: true };
}

/** The patch from `base` to `fork` (empty when nothing that counts differs). */
export async function diffTrees(options: DiffOptions): Promise<Buffer> {
  return withPrivateRepo(async (repo) => {
    const { changes } = await compareTrees(options.base, options.fork, { repo, warn: options.warn, trustTimes: options.trustTimes });
    const base = { root: options.base, bytes: rootBytes(options.base) };
    const fork = { root: options.fork, bytes: rootBytes(options.fork) };
    return makePatch(repo, base, fork, changes);
  });
}
