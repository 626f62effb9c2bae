// arb fork --prune: removes what is done with, and nothing else. A fork that is unchanged or
// merged goes with its base, and a base whose fork is gone goes too, once each has been left
// alone for an hour (nothing inside modified: see list.ts's UPDATED). A fork with files only
// there, or commits, branches or tags only in its repository (src/fork/repo-work.ts), one
// changed in the last hour, one a process works in (its working directory or an open file is
// there: an agent still thinking, in a fork just made of old files), a link where a fork was, or
// one that cannot be read is kept, and the reasons are counted.
//
// Removing is where a mistake loses work, so:
// - only the forks and bases findForks names beside the directory are ever removed, never the
//   directory itself nor anything outside its parent;
// - right before removing, each is examined again, and kept if its status, its last change or
//   its inode moved (a fork that changes while it is being examined is kept); then examined once
//   more reading every file, since equal size, mode and time do not prove equal content (touch
//   -r, or touch -d on a fork and its base), and kept if that finds files only here;
// - the removal walks by descriptors (src/fork/remove.ts), each directory opened without
//   following a link and relative to its parent's, never into another file system, so a link
//   put inside the fork, even in place of a directory while it is removed, is removed as a link
//   and never followed; a link where the fork was is never removed through, and a fork replaced
//   since it was examined (another inode) is left.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError } from '../errors';
import { isInside } from '../paths/inside';
import { ForkEntry, examine, listForks, showPath, timeAgo } from './list';
import { removeTree } from './remove';
import { processPlaces, processesIn } from '../tree/processes';

export const LEFT_ALONE_MS = 60 * 60 * 1000;

export interface PruneOptions {
  /** Say what would be removed, remove nothing. */
  dryRun?: boolean;
  /** The time "an hour ago" is counted from; now by default. */
  now?: number;
  /** Called after each fork or base is first examined, before it is examined again and removed. */
  onExamined?: (entry: ForkEntry) => void;
  warn?: (message: string) => void;
}

export interface PruneResult {
  /** Paths removed (or, with dryRun, that would be). */
  removed: string[];
  /** What was kept, each with why. */
  kept: { entry: ForkEntry; reason: KeptReason }[];
  /** Removals that failed. */
  failed: { path: string; message: string }[];
}

export type KeptReason = 'only-here' | 'commits-only-here' | 'recent' | 'in-use' | 'not-a-directory' | 'unreadable' | 'changed-while-pruning';

/** Files only in the fork, or else commits, branches or tags only in its repository. */
function onlyHereReason(e: ForkEntry): KeptReason {
  return e.count > 0 ? 'only-here' : 'commits-only-here';
}

function keepReason(e: ForkEntry, now: number, places: { pid: number; place: string }[]): KeptReason | undefined {
  if (e.fork && e.status !== 'not-a-directory' && processesIn(e.fork, places).length > 0) return 'in-use';
  switch (e.status) {
    case 'only-here':
      return onlyHereReason(e);
    case 'not-a-directory':
      return 'not-a-directory';
    case 'unreadable':
      return 'unreadable';
    default:
      return now - e.updatedMs < LEFT_ALONE_MS ? 'recent' : undefined;
  }
}

/** Whether an examination right now still says what the first one did. */
function unchangedSince(before: ForkEntry, after: ForkEntry): boolean {
  return (
    before.status === after.status &&
    before.updatedMs === after.updatedMs &&
    before.fork === after.fork &&
    before.identity?.dev === after.identity?.dev &&
    before.identity?.ino === after.identity?.ino
  );
}

/**
 * Removes one fork or base by descriptors (src/fork/remove.ts), only if it is still the
 * directory that was examined (`expect`); throws saying why not.
 */
export function removeDirectory(p: string, expect?: { dev: number; ino: number }): void {
  const outcome = removeTree(p, expect);
  if (outcome === 'not-directory') throw new ArbError('ARB_IO', `'${p}' is not a directory: left as it is`);
  if (outcome === 'other') throw new ArbError('ARB_IO', `'${p}' is not the directory examined (replaced meanwhile): left as it is`);
}

/**
 * Prunes the forks of `dir`. Each path removed is reported to `onRemove` as it goes (so that an
 * interrupted prune has said what it did).
 */
export async function pruneForks(dir: string, options: PruneOptions = {}, onRemove: (p: string) => void = () => undefined): Promise<PruneResult> {
  const resolved = path.resolve(dir);
  const parent = path.dirname(resolved);
  const now = options.now ?? Date.now();
  const result: PruneResult = { removed: [], kept: [], failed: [] };
  const places = processPlaces();
  for (const entry of await listForks(resolved, { warn: options.warn })) {
    const reason = keepReason(entry, now, places);
    if (reason) {
      result.kept.push({ entry, reason });
      continue;
    }
    const targets = entry.status === 'base-only' ? [entry.base] : [entry.fork!, entry.base];
    // Never anything but a sibling of the directory that findForks named; never the directory.
    for (const t of targets) {
      if (path.dirname(t) !== parent || t === resolved) throw new ArbError('ARB_INTERNAL', `refusing to remove '${t}': not a fork of '${resolved}'`);
    }
    options.onExamined?.(entry);
    const forkPath = entry.fork ?? path.join(parent, `${path.basename(resolved)}.${entry.name}`);
    if (!options.dryRun) {
      const again = await examine(resolved, entry.name, forkPath, entry.base, { warn: options.warn });
      const why = unchangedSince(entry, again) ? keepReason(again, now, processPlaces()) : 'changed-while-pruning';
      if (why) {
        result.kept.push({ entry: again, reason: why });
        continue;
      }
    }
    // Then every file is read (with --dry-run too, so that it says what prune would do): the
    // looks above trusted equal size, mode and time, which a change made with its time kept
    // (touch -r), or a fork and its base both aged with touch -d, also has.
    if (entry.status !== 'base-only') {
      const read = await examine(resolved, entry.name, forkPath, entry.base, { warn: options.warn, trustTimes: false });
      if (read.status === 'only-here' || read.status === 'unreadable' || read.status === 'not-a-directory') {
        result.kept.push({ entry: read, reason: read.status === 'only-here' ? onlyHereReason(read) : read.status });
        continue;
      }
    }
    for (const t of targets) {
      if (options.dryRun) {
        result.removed.push(t);
        onRemove(t);
        continue;
      }
      try {
        // The fork (or a base left over) only if it is the very directory examined.
        removeDirectory(t, t === (entry.fork ?? entry.base) ? entry.identity : undefined);
        result.removed.push(t);
        onRemove(t);
      } catch (err) {
        result.failed.push({ path: t, message: (err as Error).message });
        break; // the base of a fork that could not be removed stays with it
      }
    }
  }
  return result;
}

/** "kept 2: 1 with files only here, 1 changed 5 minutes ago" */
export function keptSummary(kept: PruneResult['kept'], now: number): string {
  if (kept.length === 0) return 'kept 0';
  const count = (r: KeptReason) => kept.filter((k) => k.reason === r).length;
  const parts: string[] = [];
  const onlyHere = count('only-here');
  if (onlyHere) parts.push(`${onlyHere} with files only here`);
  const commits = count('commits-only-here');
  if (commits) parts.push(`${commits} with commits or branches only here`);
  const recent = kept.filter((k) => k.reason === 'recent');
  if (recent.length === 1) parts.push(`1 changed ${timeAgo(recent[0].entry.updatedMs, now)}`);
  else if (recent.length > 1) parts.push(`${recent.length} changed in the last hour`);
  const inUse = count('in-use');
  if (inUse) parts.push(`${inUse} in use by a running process`);
  const link = count('not-a-directory');
  if (link) parts.push(`${link} whose fork is not a directory (a link?)`);
  const unreadable = count('unreadable');
  if (unreadable) parts.push(`${unreadable} that could not be read`);
  const moving = count('changed-while-pruning');
  if (moving) parts.push(`${moving} changed while being examined`);
  return `kept ${kept.length}: ${parts.join(', ')}`;
}

/** arb fork --prune [--dry-run] [DIR]: prints what it removes, then what it kept; 0, or 1 on a failure. */
export async function runPrune(dir: string, dryRun: boolean, write: (text: string) => void, warn: (message: string) => void, now = Date.now()): Promise<number> {
  const cwd = process.cwd();
  const result = await pruneForks(dir, { dryRun, now }, (p) => write(`${dryRun ? 'would remove' : 'removed'} ${showPath(p, cwd)}\n`));
  write(`${keptSummary(result.kept, now)}\n`);
  let status = 0;
  for (const k of result.kept) {
    if (k.reason === 'unreadable') {
      warn(`cannot tell what is in '${k.entry.fork}': ${k.entry.error}`);
      status = 1;
    }
  }
  for (const f of result.failed) {
    warn(f.message);
    status = 1;
  }
  return status;
}
