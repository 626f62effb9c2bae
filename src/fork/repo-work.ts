// Work that lives only in a fork's repository: commits and branches made in the fork (a fork's
// .git is its own copy of the directory's repository), which a work tree back to its base does
// not show, and which removing the fork would lose.
//
// The fork's repository is the confined command's to change, its configuration included, so git
// never runs in it. Its refs are read here as data (loose refs under refs/, packed-refs, a
// detached HEAD, worktrees' HEADs), never following a link; then git, in arb's private
// repository (src/git/private-git.ts), counts the commits reachable from them and from neither
// the directory's refs nor the base's (what the fork was made with), reading the three
// repositories' objects and nothing else of them.
import * as fs from 'node:fs';

import { ArbError } from '../errors';
import { isInside } from '../paths/inside';
import type { PrivateRepo } from '../git/private-git';
import { GitDirs, readSmall, repositoryAt } from '../tree/repo';
import { Root, realRootBytes } from '../tree/paths';

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

function b(latin1: string): Buffer {
  return Buffer.from(latin1, 'latin1');
}

/** A repository's refs: name -> object id (loose refs over packed ones, as git reads them). */
export function readRefs(dirs: GitDirs): Map<string, string> {
  const refs = new Map<string, string>();
  if (fs.existsSync(b(`${dirs.commonDir}/reftable`))) {
    throw new ArbError('ARB_GIT', `cannot read the refs of '${dirs.commonDir}': reftable repositories are not read`);
  }
  const packed = readSmall(`${dirs.commonDir}/packed-refs`, 1 << 26);
  for (const line of packed?.split('\n') ?? []) {
    const m = /^([0-9a-f]{40,64}) (refs\/.+)$/.exec(line);
    if (m && OID.test(m[1])) refs.set(m[2], m[1]);
  }
  const walk = (rel: string) => {
    let names: string[];
    try {
      names = fs.readdirSync(b(`${dirs.commonDir}/${rel}`), { encoding: 'latin1' });
    } catch {
      return;
    }
    for (const name of names) {
      const child = `${rel}/${name}`;
      let st: fs.Stats;
      try {
        st = fs.lstatSync(b(`${dirs.commonDir}/${child}`));
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(child);
      else if (st.isFile()) {
        const oid = readSmall(`${dirs.commonDir}/${child}`)?.trim();
        if (oid && OID.test(oid)) refs.set(child, oid);
      }
    }
  };
  walk('refs');
  // Commits checked out detached, here or in a worktree, are reachable from nothing else.
  const heads = [`${dirs.gitDir}/HEAD`];
  try {
    for (const w of fs.readdirSync(b(`${dirs.commonDir}/worktrees`), { encoding: 'latin1' })) heads.push(`${dirs.commonDir}/worktrees/${w}/HEAD`);
  } catch {
    /* no worktrees */
  }
  heads.forEach((h, i) => {
    const oid = readSmall(h)?.trim();
    if (oid && OID.test(oid)) refs.set(i === 0 ? 'HEAD' : `worktree HEAD ${i}`, oid);
  });
  return refs;
}

/** What a fork's repository holds that the directory's does not. */
export interface RepoWork {
  /** Commits reachable from the fork's refs, from neither the directory's nor the base's. */
  commits: number;
  /** Branches (refs/heads) the fork has and neither the directory nor the base has. */
  branches: string[];
  /** Tags likewise. */
  tags: string[];
}

const NONE: RepoWork = { commits: 0, branches: [], tags: [] };

/**
 * The work only in the repository of `fork` (a fork of `dir` made with `base`). A fork whose
 * `.git` is not a repository of its own inside it (a worktree's `.git` file naming the
 * directory's) holds none. Throws when the repository cannot be read: a fork that cannot be
 * read is kept.
 */
export async function workOnlyInFork(repo: PrivateRepo, dir: Root, fork: Root, base: Root): Promise<RepoWork> {
  const forkDirs = repositoryAt(fork, false);
  if (!forkDirs) return NONE;
  const forkTop = realRootBytes(fork).toString('latin1');
  if (forkDirs.commonDir === forkTop || !isInside(forkDirs.commonDir, forkTop, 'lexical')) return NONE;
  const forkRefs = readRefs(forkDirs);
  const dirDirs = repositoryAt(dir, false);
  const baseDirs = repositoryAt(base, false);
  const known = new Map<string, string>();
  const knownOids = new Set<string>();
  for (const dirs of [dirDirs, baseDirs]) {
    if (!dirs) continue;
    for (const [name, oid] of readRefs(dirs)) {
      known.set(name, oid);
      knownOids.add(oid);
    }
  }
  const newNames = (prefix: string) => [...forkRefs.keys()].filter((n) => n.startsWith(prefix) && !known.has(n)).map((n) => n.slice(prefix.length));
  const work: RepoWork = { commits: 0, branches: newNames('refs/heads/'), tags: newNames('refs/tags/') };
  const tips = [...new Set(forkRefs.values())].filter((oid) => !knownOids.has(oid));
  if (tips.length === 0) return work;
  // The objects of the three repositories (git reads only objects from there, and the
  // alternates they name); refs given on stdin; nothing of their configuration.
  const objects = (dirs: GitDirs) => repo.alias(b(`${dirs.commonDir}/objects`));
  const alternates = [dirDirs, baseDirs].filter((d): d is GitDirs => !!d && fs.existsSync(b(`${d.commonDir}/objects`))).map(objects);
  // A shallow fork's history stops where its `shallow` file says, as git's would.
  const shallow = readSmall(`${forkDirs.commonDir}/shallow`, 1 << 26);
  const shallowFile = `${repo.gitDir}/shallow`;
  if (shallow !== undefined) fs.writeFileSync(shallowFile, shallow, 'latin1');
  try {
    const input = [...tips, ...[...knownOids].map((oid) => `^${oid}`)].join('\n') + '\n';
    const r = await repo.git(['rev-list', '--count', '--ignore-missing', '--stdin'], {
      input,
      objectDirectory: objects(forkDirs),
      alternateObjectDirectories: alternates,
    });
    work.commits = Number(r.stdout.toString().trim()) || 0;
  } finally {
    fs.rmSync(shallowFile, { force: true });
  }
  return work;
}
