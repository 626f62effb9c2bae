// Listing the directories of the two trees arb diff walks, a level at a time, in pairs (a
// directory in the base and the same in the fork): each entry with what lstat says of it (never
// following a link), from the very directory the walk saw in its parent's listing, and only the
// entries the walk needs to see: a file the same by lstat on both sides is left out here.
//
// On Linux the addon lists a whole level of both trees in one call, on a few threads
// (native/linux/list_dir.cc): thousands of lstat round trips into JavaScript, each making a
// fs.Stats, cost arb diff more than the rest of its work, and the system calls left are most of
// its time. Pairing there too means a tree of 50,000 unchanged files makes no string or object
// per file in JavaScript. And it lists only the directory the walk expects, opened without
// following a link and checked by device and inode, with each entry stat'ed relative to it: a
// directory that a confined command turned into a link (to the home directory) while arb walked,
// or a directory above it, cannot slip other files into the walk. Elsewhere (macOS) the same is
// done with fs calls, the identity checked just before listing.
import * as fs from 'node:fs';

import * as native from '../native';
import type { DirPairsListing } from '../native';
import { RelPath } from './paths';

export type Kind = 'dir' | 'file' | 'symlink' | 'other';

/** What lstat says of an entry, as the walk keeps it. */
export interface Seen {
  kind: Kind;
  /** st_mode: type and permissions. */
  mode: number;
  size: number;
  mtimeMs: number;
  /** The change time, which touch cannot set back. */
  ctimeMs: number;
  dev: number;
  ino: number;
}

/** Which directory a listing must be of: its device and inode, as its parent's listing saw. */
export interface DirId {
  dev: number;
  ino: number;
}

const { S_IFMT, S_IFDIR, S_IFREG, S_IFLNK } = fs.constants;

export function kindOfMode(mode: number): Kind {
  switch (mode & S_IFMT) {
    case S_IFDIR:
      return 'dir';
    case S_IFREG:
      return 'file';
    case S_IFLNK:
      return 'symlink';
    default:
      return 'other';
  }
}

export function seenOf(st: fs.Stats): Seen {
  return { kind: kindOfMode(st.mode), mode: st.mode, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, dev: st.dev, ino: st.ino };
}

function notDirectory(dir: Buffer): NodeJS.ErrnoException {
  return Object.assign(new Error(`'${dir.toString()}' is not a directory`), { code: 'ENOTDIR', syscall: 'open', path: dir.toString() });
}

/**
 * Pairs of directories listed (see DirPairsListing in src/native.ts), with each directory's
 * problem where the pair has it: index 2p for pair p's base, 2p + 1 for its fork; undefined when
 * listed or when the pair has no such directory, 'other' when another directory is there now, or
 * why it could not be listed.
 */
export type PairListing = DirPairsListing;

/** A directory to list, and which one it must be. */
export interface DirToList {
  /**
   * Its absolute path, one character per byte (as RelPath): thousands of them go to the addon
   * as one string, made a Buffer once, not a Buffer each (21 ms of the large bench corpus's walk).
   */
  path: string;
  id: DirId;
}

/** A directory of the base and the same of the fork; either may be absent. */
export interface DirPair {
  base?: DirToList;
  fork?: DirToList;
}

/** What lstat said of an entry, as a listing's stats keep it (index 2r: base, 2r + 1: fork). */
interface Stat {
  mode: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

/**
 * Whether the base's and the fork's entry of a name are the same by lstat, so that the walk need
 * not look at them: the same type and permissions, size and modification time, not directories
 * (the walk enters those), and the fork's not changed since the fork was made: its change time,
 * which touch cannot set back, no later than `trustedUntilMs`. native/linux/list_dir.cc
 * SameByLstat is the same rule.
 */
export function sameByLstat(b: Stat, f: Stat, trustedUntilMs: number): boolean {
  return b.mode === f.mode && (b.mode & S_IFMT) !== S_IFDIR && f.ctimeMs <= trustedUntilMs && b.size === f.size && b.mtimeMs === f.mtimeMs;
}

/** What lstat said of row r's entry on one side (0: the base's, 1: the fork's), if it has one. */
export function seenAt(l: PairListing, r: number, side: 0 | 1): Seen | undefined {
  const i = 2 * r + side;
  const mode = l.mode[i];
  if (mode === 0) return undefined;
  return { kind: kindOfMode(mode), mode, size: l.size[i], mtimeMs: l.mtimeMs[i], ctimeMs: l.ctimeMs[i], dev: l.dev[i], ino: l.ino[i] };
}

/** One directory listed with fs calls (macOS): its entries sorted by name, or why not. */
function listOneInJs(dir: DirToList): [RelPath, fs.Stats][] | 'other' | NodeJS.ErrnoException {
  try {
    const at = Buffer.from(dir.path, 'latin1');
    const self = fs.lstatSync(at);
    if (!self.isDirectory()) throw notDirectory(at);
    if (self.dev !== dir.id.dev || self.ino !== dir.id.ino) return 'other';
    const entries: [RelPath, fs.Stats][] = [];
    // Bytewise, as latin1 strings sort by code unit.
    for (const name of fs.readdirSync(at, { encoding: 'latin1' }).sort()) {
      const st = fs.lstatSync(Buffer.from(`${dir.path}/${name}`, 'latin1'), { throwIfNoEntry: false });
      // Removed since it was listed: as if listed a moment later.
      if (st) entries.push([name, st]);
    }
    return entries;
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

/** listDirPairs done with fs calls (macOS; exported for tests, which hold it to the native one). */
export function listDirPairsInJs(pairs: DirPair[], trustedUntilMs: number): PairListing {
  const problem: PairListing['problem'] = [];
  const list = (dir: DirToList | undefined): [RelPath, fs.Stats][] => {
    const l = dir ? listOneInJs(dir) : [];
    problem.push(Array.isArray(l) ? undefined : l);
    return Array.isArray(l) ? l : [];
  };
  const start: number[] = [];
  const names: string[] = [];
  const stats: (fs.Stats | undefined)[] = [];
  const newest: number[] = [];
  for (const pair of pairs) {
    const b = list(pair.base);
    const f = list(pair.fork);
    start.push(names.length);
    newest.push(f.reduce((n, [, st]) => Math.max(n, st.mtimeMs), -Infinity));
    for (let i = 0, j = 0; i < b.length || j < f.length; ) {
      const order = i === b.length ? 1 : j === f.length ? -1 : b[i][0] < f[j][0] ? -1 : b[i][0] > f[j][0] ? 1 : 0;
      const base = order <= 0 ? b[i++] : undefined;
      const fork = order >= 0 ? f[j++] : undefined;
      const name = (base ?? fork)![0];
      if (base && fork && sameByLstat(base[1], fork[1], trustedUntilMs) && name !== '.gitignore') continue;
      names.push(name);
      stats.push(base?.[1], fork?.[1]);
    }
  }
  start.push(names.length);
  const column = (pick: (st: fs.Stats) => number) => Float64Array.from(stats, (st) => (st ? pick(st) : 0));
  return {
    problem,
    start: Uint32Array.from(start),
    names,
    mode: Uint32Array.from(stats, (st) => st?.mode ?? 0),
    size: column((st) => st.size),
    mtimeMs: column((st) => st.mtimeMs),
    ctimeMs: column((st) => st.ctimeMs),
    dev: column((st) => st.dev),
    ino: column((st) => st.ino),
    newest: Float64Array.from(newest),
  };
}

function listNatively(pairs: DirPair[], trustedUntilMs: number): PairListing {
  const dirs: DirToList[] = [];
  const indexes = new Int32Array(pairs.length * 2);
  pairs.forEach((p, i) => {
    indexes[2 * i] = p.base ? dirs.push(p.base) - 1 : -1;
    indexes[2 * i + 1] = p.fork ? dirs.push(p.fork) - 1 : -1;
  });
  const ids = new Float64Array(dirs.length * 2);
  dirs.forEach((d, i) => {
    ids[2 * i] = d.id.dev;
    ids[2 * i + 1] = d.id.ino;
  });
  const listing = native.listDirPairs(
    dirs.map((d) => d.path),
    ids,
    indexes,
    trustedUntilMs,
  );
  return { ...listing, problem: Array.from(indexes, (d) => (d === -1 ? undefined : listing.problem[d])) };
}

let chosen: ((pairs: DirPair[], trustedUntilMs: number) => PairListing) | undefined;

/**
 * Lists each pair's directories, if each is the directory its id names, as rows (see
 * PairListing): every name on either side but those sameByLstat(…, trustedUntilMs), and
 * `.gitignore` always. A directory's problem is 'other' if another directory is there now; a
 * link or a file in its place is an ENOTDIR error, a missing one ENOENT (Node-style errors, with
 * code and path).
 */
export function listDirPairs(pairs: DirPair[], trustedUntilMs: number): PairListing {
  chosen ??= native.hasListDirPairs() ? listNatively : listDirPairsInJs;
  return chosen(pairs, trustedUntilMs);
}
