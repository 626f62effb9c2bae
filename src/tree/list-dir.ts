// Listing one directory of a tree that arb diff walks: each entry with what lstat says of it
// (never following a link), from the very directory the walk saw in its parent's listing.
//
// On Linux the addon does it in one call per directory (native/linux/list_dir.cc): thousands of
// lstat round trips into JavaScript, each making a fs.Stats, cost arb diff more than the rest of
// its work. And it lists only the directory the walk expects, opened without following a link and
// checked by device and inode, with each entry stat'ed relative to it: a directory that a confined
// command turned into a link (to the home directory) while arb walked, or a directory above it,
// cannot slip other files into the walk. Elsewhere (macOS) the same is done with fs calls, the
// identity checked just before listing.
import * as fs from 'node:fs';

import * as native from '../native';
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

/** listDir done with fs calls (macOS; exported for tests, which hold it to the native one). */
export function listInJs(dir: Buffer, id: DirId): Map<RelPath, Seen> | undefined {
  const self = fs.lstatSync(dir);
  if (!self.isDirectory()) throw notDirectory(dir);
  if (self.dev !== id.dev || self.ino !== id.ino) return undefined;
  const entries = new Map<RelPath, Seen>();
  for (const name of fs.readdirSync(dir, { encoding: 'latin1' })) {
    const st = fs.lstatSync(Buffer.concat([dir, Buffer.from(`/${name}`, 'latin1')]), { throwIfNoEntry: false });
    // Removed since it was listed: as if listed a moment later.
    if (st) entries.set(name, seenOf(st));
  }
  return entries;
}

function listNatively(dir: Buffer, id: DirId): Map<RelPath, Seen> | undefined {
  const r = native.listDir(dir, id.dev, id.ino);
  if (!r) return undefined;
  const entries = new Map<RelPath, Seen>();
  for (let i = 0; i < r.names.length; i++) {
    const mode = r.mode[i];
    entries.set(r.names[i], { kind: kindOfMode(mode), mode, size: r.size[i], mtimeMs: r.mtimeMs[i], ctimeMs: r.ctimeMs[i], dev: r.dev[i], ino: r.ino[i] });
  }
  return entries;
}

let chosen: ((dir: Buffer, id: DirId) => Map<RelPath, Seen> | undefined) | undefined;

/**
 * The entries of the directory at `dir` (names one character per byte), if it is the directory
 * `id` names; undefined if another directory is there now. A link or a file in its place fails
 * with ENOTDIR, a missing one with ENOENT (Node-style errors, with code and path).
 */
export function listDir(dir: Buffer, id: DirId): Map<RelPath, Seen> | undefined {
  chosen ??= native.hasListDir() ? listNatively : listInJs;
  return chosen(dir, id);
}
