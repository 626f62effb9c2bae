// arb fork -l: the forks of a directory and what is in each. A fork's status uses arb diff's own
// comparison (src/tree/compare.ts), so what counts is what its patch would carry (.git and
// ignored files do not), and it reads only files whose size, mode or time differ from the base:
//
//   unchanged          the fork equals its base;
//   N files only here  N of the files that differ from the base are not the same in the directory;
//                      or, as "2 commits, 1 branch only here", the fork's repository holds commits,
//                      branches or tags that neither the directory's nor the base's has
//                      (src/fork/repo-work.ts);
//   merged             every file that differs from the base is now the same in the directory
//                      (its patch was applied);
//   base only          a base whose fork is gone.
//
// UPDATED is the newest change inside the fork: the newest modification time of anything in it
// (.git and ignored files included). A fork keeps its files' times, so a fork just made of files
// last changed a week ago was last changed a week ago; prune.ts also looks for processes in it.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { compareTrees, Change, EntryStat } from '../tree/compare';
import { enclosingRepoTop } from '../tree/repo';
import { PrivateRepo, trustGitOutside, withPrivateRepo } from '../git/private-git';
import { RelPath, fsPath, rootBytes, visible } from '../tree/paths';
import { readSeenLink, sameContent } from '../tree/read';
import { findForks } from './names';
import { workOnlyInFork } from './repo-work';

export type ForkStatus = 'unchanged' | 'only-here' | 'merged' | 'base-only' | 'not-a-directory' | 'unreadable';

export interface ForkEntry {
  /** The suffix: '1' for turso.1. */
  name: string;
  /** Absolute path of the fork, or undefined for a base whose fork is gone. */
  fork?: string;
  /** Absolute path of the base. */
  base: string;
  status: ForkStatus;
  /** Files that differ from the base and are not the same in the directory. */
  count: number;
  /** Files that differ from the base. */
  changed: number;
  /** The newest change inside the fork (or, for a base only, inside the base), ms since the epoch. */
  updatedMs: number;
  /** Commits in the fork's repository that neither the directory's nor the base's has. */
  commits: number;
  /** Branches and tags only in the fork's repository. */
  branches: string[];
  tags: string[];
  /** For 'unreadable': why. */
  error?: string;
  /** What the status was computed from (for prune to check that nothing moved since). */
  identity?: { dev: number; ino: number };
}

export interface ListOptions {
  warn?: (message: string) => void;
  /** A private repository to ask git in (else one is made for the call). */
  repo?: PrivateRepo;
  /**
   * Take files whose size, mode and time match the base's as unchanged, unread (the default).
   * false reads them: a change made with its time kept (touch -r), or a fork and its base both
   * aged with touch -d, looks unchanged by those alone.
   */
  trustTimes?: boolean;
}

/** Whether the directory has, at `rel`, what the fork has (a deletion: nothing there). */
function sameInDirectory(dir: string, fork: string, change: Change): boolean {
  const dirTree = { root: dir, bytes: rootBytes(dir) };
  const forkTree = { root: fork, bytes: rootBytes(fork) };
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(fsPath(dirTree.bytes, change.path));
  } catch {
    st = undefined;
  }
  const f = change.fork;
  if (!f) return st === undefined;
  if (!st) return false;
  if (f.type === 'symlink') {
    if (!st.isSymbolicLink()) return false;
    const seenLink: EntryStat = { type: 'symlink', perm: st.mode & 0o7777, size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino };
    let inDirectory: Buffer;
    try {
      inDirectory = readSeenLink(dirTree, change.path, seenLink);
    } catch {
      return false; // the directory's own link moved, or lies beyond a link it has: not the same
    }
    return inDirectory.equals(readSeenLink(forkTree, change.path, f));
  }
  if (!st.isFile() || st.size !== f.size || (st.mode & 0o100) !== (f.perm & 0o100)) return false;
  const seen: EntryStat = { type: 'file', perm: st.mode & 0o7777, size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino };
  return sameContent(dirTree, forkTree, change.path, seen, f);
}

/** The newest modification time of anything under `root`, never following a link. */
export function newestChange(root: string): number {
  let newest = 0;
  const stack: RelPath[] = [''];
  const bytes = rootBytes(root);
  while (stack.length) {
    const rel = stack.pop()!;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(fsPath(bytes, rel));
    } catch {
      continue;
    }
    newest = Math.max(newest, st.mtimeMs);
    if (!st.isDirectory()) continue;
    let names: string[];
    try {
      names = fs.readdirSync(fsPath(bytes, rel), { encoding: 'latin1' });
    } catch {
      continue;
    }
    for (const name of names) stack.push(rel === '' ? name : `${rel}/${name}`);
  }
  return newest;
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

/**
 * Examines one fork (or base left over) of `dir`: its status and when it last changed. Never
 * follows a link where the fork should be: that is 'not-a-directory'.
 */
export async function examine(dir: string, name: string, forkPath: string, basePath: string, options: ListOptions = {}): Promise<ForkEntry> {
  const forkSt = lstatOrUndefined(forkPath);
  const baseSt = lstatOrUndefined(basePath);
  const entry: ForkEntry = { name, fork: forkSt ? forkPath : undefined, base: basePath, status: 'base-only', count: 0, changed: 0, updatedMs: 0, commits: 0, branches: [], tags: [] };
  try {
    if (!forkSt) {
      entry.updatedMs = newestChange(basePath);
      entry.identity = baseSt && { dev: baseSt.dev, ino: baseSt.ino };
      return entry;
    }
    if (!forkSt.isDirectory()) {
      // A link (or a file) where the fork was: neither followed nor taken for a fork.
      entry.status = 'not-a-directory';
      entry.updatedMs = forkSt.mtimeMs;
      return entry;
    }
    entry.identity = { dev: forkSt.dev, ino: forkSt.ino };
    // The git that looking runs is never one planted in the fork or its base (issue 13).
    trustGitOutside([forkPath, basePath]);
    const look = async (repo: PrivateRepo) => {
      const compared = await compareTrees(basePath, forkPath, {
        newest: true,
        repo,
        warn: options.warn ?? (() => undefined),
        trustTimes: options.trustTimes,
        outerTop: enclosingRepoTop(forkPath, basePath),
      });
      return { ...compared, work: await workOnlyInFork(repo, dir, forkPath, basePath) };
    };
    const { changes, newestMtimeMs, work } = options.repo ? await look(options.repo) : await withPrivateRepo(look);
    entry.updatedMs = newestMtimeMs ?? 0;
    entry.changed = changes.length;
    entry.commits = work.commits;
    entry.branches = work.branches;
    entry.tags = work.tags;
    const repoWork = work.commits + work.branches.length + work.tags.length > 0;
    if (changes.length === 0 && !repoWork) {
      entry.status = 'unchanged';
      return entry;
    }
    entry.count = changes.filter((c) => !sameInDirectory(dir, forkPath, c)).length;
    entry.status = entry.count === 0 && !repoWork ? 'merged' : 'only-here';
  } catch (err) {
    entry.status = 'unreadable';
    entry.error = (err as Error).message;
  }
  return entry;
}

/**
 * The forks of `dir` (siblings `DIR.NAME` with a base `.DIR.NAME.base`) and the bases whose fork
 * is gone, in findForks' order. A `DIR.NAME` with no base is not a fork of it, and not listed.
 */
export async function listForks(dir: string, options: ListOptions = {}): Promise<ForkEntry[]> {
  const resolved = path.resolve(dir);
  const parent = path.dirname(resolved);
  const stem = path.basename(resolved);
  const found = findForks(resolved).filter((f) => f.base);
  if (found.length === 0) return [];
  // One private repository for all of them.
  return withPrivateRepo(async (repo) => {
    const out: ForkEntry[] = [];
    for (const f of found) {
      // findForks sees directories only; a link where the fork was is looked at here, unfollowed.
      const forkPath = f.fork ?? path.join(parent, `${stem}.${f.name}`);
      out.push(await examine(resolved, f.name, forkPath, f.base!, { ...options, repo: options.repo ?? repo }));
    }
    return out;
  });
}

/** "just now", "1 minute ago", "9 minutes ago", "2 hours ago", "4 days ago", … */
export function timeAgo(thenMs: number, nowMs: number): string {
  const s = Math.floor((nowMs - thenMs) / 1000);
  if (s < 10) return 'just now';
  const unit = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'} ago`;
  if (s < 60) return unit(s, 'second');
  if (s < 3600) return unit(Math.floor(s / 60), 'minute');
  if (s < 86400) return unit(Math.floor(s / 3600), 'hour');
  if (s < 86400 * 60) return unit(Math.floor(s / 86400), 'day');
  if (s < 86400 * 730) return unit(Math.floor(s / (86400 * 30)), 'month');
  return unit(Math.floor(s / (86400 * 365)), 'year');
}

/** How a status reads in the table. */
export function statusText(e: ForkEntry): string {
  switch (e.status) {
    case 'unchanged':
      return 'unchanged';
    case 'merged':
      return 'merged';
    case 'base-only':
      return 'base only';
    case 'only-here': {
      const n = (count: number, one: string, many: string) => (count ? [`${count} ${count === 1 ? one : many}`] : []);
      const parts = [
        ...n(e.count, 'file', 'files'),
        ...n(e.commits, 'commit', 'commits'),
        ...n(e.branches.length, 'branch', 'branches'),
        ...n(e.tags.length, 'tag', 'tags'),
      ];
      return `${parts.length ? parts.join(', ') : '0 files'} only here`;
    }
    case 'not-a-directory':
      return 'not a directory';
    case 'unreadable':
      return 'cannot be read';
  }
}

/**
 * A path as the table shows it: relative to the working directory, control characters escaped,
 * and C1 controls and bidi overrides too (a fork name may hold them, and the forks of a
 * directory inside a fork are named by the command that ran there).
 */
export function showPath(p: string, cwd: string): string {
  const rel = path.relative(cwd, p) || '.';
  // eslint-disable-next-line no-control-regex
  return visible(/[\x00-\x1f\x7f]/.test(rel) ? JSON.stringify(rel) : rel);
}

/** The table: FORK (relative to cwd), UPDATED, STATUS, in aligned columns. */
export function formatTable(entries: ForkEntry[], cwd: string, nowMs: number): string {
  const rows = [['FORK', 'UPDATED', 'STATUS']];
  for (const e of entries) rows.push([showPath(e.fork ?? e.base, cwd), timeAgo(e.updatedMs, nowMs), statusText(e)]);
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2]}`).join('\n') + '\n';
}

/** The JSON form: an array of {name, path, base, updated, status, count, changed}. */
export function formatJson(entries: ForkEntry[]): string {
  const items = entries.map((e) => ({
    name: e.name,
    path: e.fork ?? null,
    base: e.base,
    updated: new Date(e.updatedMs).toISOString(),
    status: e.status,
    count: e.count,
    changed: e.changed,
    commits: e.commits,
    branches: e.branches,
    tags: e.tags,
    ...(e.error ? { error: e.error } : {}),
  }));
  return `${JSON.stringify(items, null, 2)}\n`;
}

/** arb fork -l [--json] [DIR]: prints the list; 0, or 1 if a fork could not be read. */
export async function runList(dir: string, json: boolean, write: (text: string) => void, warn: (message: string) => void): Promise<number> {
  const entries = await listForks(dir);
  write(json ? formatJson(entries) : formatTable(entries, process.cwd(), Date.now()));
  let status = 0;
  for (const e of entries) {
    if (e.status === 'unreadable') {
      warn(`cannot tell what is in '${e.fork}': ${e.error}`);
      status = 1;
    }
  }
  return status;
}
