// arb diff: the patch of what changed in a fork since it was made (against its base), or between
// two directories. The comparison (src/tree/compare.ts) decides which paths differ, reading only
// files whose size, permissions or time differ; the patch (src/diff/patch.ts) is made from those
// paths alone, in a private repository removed afterwards.
import * as fs from 'node:fs';

import { ArbError, systemError } from '../errors';
import { trustGitOutside, withPrivateRepo } from '../git/private-git';
import { compareTrees, mustBeDirectory, treeOf } from '../tree/compare';
import { RelPath, Root, baseBytesOf, rootBytes, showRoot } from '../tree/paths';
import { applyPrefix, enclosingRepoTop } from '../tree/repo';
import { PatchFile, makePatch } from './patch';

export interface DiffOptions {
  /** The old side: a fork's base, or DIR1 (bytes: a name need not be UTF-8). */
  base: Root;
  /** The new side: the fork, or DIR2. */
  fork: Root;
  /** A fork and its base: files whose size, mode and time match are not read. */
  trustTimes: boolean;
  /** Put before every path in the patch: see applyPrefix(). */
  prefix?: RelPath;
  /** The top of the repository both lie in, whose .gitignore files above them count too. */
  outerTop?: Buffer;
  warn?: (message: string) => void;
}

/** The two sides of `arb diff FORK` or `arb diff DIR1 DIR2`, checked to be directories. */
export interface Sides {
  base: Root;
  fork: Root;
  trustTimes: boolean;
  prefix: RelPath;
  outerTop?: Buffer;
}

/**
 * The sides, resolved byte for byte: a relative name against the working directory's own bytes
 * (src/tree/paths.ts cwdBytes), so that nothing but the directories named is compared.
 */
export function sidesOf(first: string, second?: string): Sides {
  if (second !== undefined) {
    const base = rootBytes(first);
    const fork = rootBytes(second);
    mustBeDirectory(base, 'DIR1', first);
    mustBeDirectory(fork, 'DIR2', second);
    return { base, fork, trustTimes: false, prefix: '' };
  }
  const fork = rootBytes(first);
  mustBeDirectory(fork, 'the fork', first);
  const base = baseBytesOf(fork);
  let st: fs.Stats;
  try {
    st = fs.statSync(base);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ArbError('ARB_NO_BASE', `'${first}' has no base: '${showRoot(base)}' does not exist`, {
        hint: 'arb diff FORK takes a fork made by arb fork; to compare two directories, give both: arb diff DIR1 DIR2',
      });
    }
    throw systemError('read the base', showRoot(base), err);
  }
  if (!st.isDirectory()) throw new ArbError('ARB_NOT_DIRECTORY', `the base '${showRoot(base)}' of '${first}' is not a directory`);
  // Finding the enclosing repository may run git (its safe.directory): never one planted here.
  trustGitOutside([fork, base].map((r) => r.toString('utf8')));
  return { base, fork, trustTimes: true, prefix: applyPrefix(fork, base), outerTop: enclosingRepoTop(fork, base) };
}

/**
 * Makes the patch from `base` to `fork` in a private repository and hands it to `use` as a file
 * there (size 0 when nothing that counts differs), which is removed afterwards: a patch is
 * written out from a file, never held whole.
 */
export async function withPatch<T>(options: DiffOptions, use: (patch: PatchFile) => Promise<T>): Promise<T> {
  // The git that diffing runs is never one planted in either tree (issue 13).
  trustGitOutside([options.base, options.fork].map((r) => rootBytes(r).toString('utf8')));
  return withPrivateRepo(async (repo) => {
    const { changes } = await compareTrees(options.base, options.fork, { repo, warn: options.warn, trustTimes: options.trustTimes, outerTop: options.outerTop });
    const patch = await makePatch(repo, treeOf(options.base), treeOf(options.fork), changes, options.prefix ?? '');
    return use(patch);
  });
}

/** The patch from `base` to `fork` (empty when nothing that counts differs). */
export async function diffTrees(options: DiffOptions): Promise<Buffer> {
  return withPatch(options, async (patch) => (patch.size === 0 ? Buffer.alloc(0) : fs.readFileSync(patch.path)));
}
