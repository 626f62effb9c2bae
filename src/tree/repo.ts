// Where a fork lies in a repository, found as git finds one: arb diff prefixes a fork's patch with
// the directory's path in the repository it lies in, and counts the .gitignore files above it.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { RelPath } from './paths';

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
