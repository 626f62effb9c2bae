// Reading a file of a tree that a confined command may still be changing. The walk saw a regular
// file (lstat); by the time it is read, the command may have put a symbolic link to a secret in
// its place, or a directory above it may have become a link to elsewhere. So a file is opened
// with O_NOFOLLOW (a link in its place fails), O_NONBLOCK (a FIFO in its place cannot block), and
// the descriptor must be the very inode the walk saw (same device and inode number): anything
// else is a tree changing under arb, and arb stops rather than read it.
import * as fs from 'node:fs';

import { ArbError, systemError } from '../errors';
import { RelPath, fsPath, showRel } from './paths';

/** What the walk saw of a file or a symbolic link (lstat). */
export interface EntryStat {
  type: 'file' | 'symlink';
  /** st_mode & 0o7777 */
  perm: number;
  size: number;
  mtimeMs: number;
  dev: number;
  ino: number;
}

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

export interface Tree {
  /** As the user named it, for messages. */
  root: string;
  /** Its absolute path's bytes. */
  bytes: Buffer;
}

export function changedUnderUs(tree: Tree, rel: RelPath): ArbError {
  return new ArbError('ARB_IO', `'${showRel(tree.root, rel)}' changed while arb was reading it`, {
    hint: 'run arb diff again once nothing is writing to the directory',
  });
}

/** Opens the file the walk saw (to read a chunk at a time), or throws: never a link, never another inode. */
export function openSeen(tree: Tree, rel: RelPath, seen: EntryStat): number {
  let fd: number;
  try {
    fd = fs.openSync(fsPath(tree.bytes, rel), OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENXIO') throw changedUnderUs(tree, rel);
    throw systemError('read', showRel(tree.root, rel), err);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.dev !== seen.dev || st.ino !== seen.ino) throw changedUnderUs(tree, rel);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

function lstatLink(tree: Tree, rel: RelPath, at: Buffer): fs.Stats {
  try {
    return fs.lstatSync(at);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw changedUnderUs(tree, rel);
    throw systemError('read the link', showRel(tree.root, rel), err);
  }
}

function readLinkAt(tree: Tree, rel: RelPath, at: Buffer, seen: EntryStat): Buffer {
  const same = (st: fs.Stats): boolean => st.isSymbolicLink() && st.dev === seen.dev && st.ino === seen.ino;
  if (!same(lstatLink(tree, rel, at))) throw changedUnderUs(tree, rel);
  let target: Buffer;
  try {
    target = fs.readlinkSync(at, { encoding: 'buffer' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EINVAL' || code === 'ENOENT' || code === 'ENOTDIR') throw changedUnderUs(tree, rel);
    throw systemError('read the link', showRel(tree.root, rel), err);
  }
  if (!same(lstatLink(tree, rel, at))) throw changedUnderUs(tree, rel);
  return target;
}

/**
 * The target of the symbolic link the walk saw, as bytes; never followed. readlink(2) follows
 * the directories above the link, and one of them may have become a link to elsewhere since the
 * walk (a link there, read by the user's rights, could name what the command cannot read:
 * /proc/PID/cwd of the user's shell). So on Linux the link's directory is opened (not through a
 * link at its own name) and the link is read through /proc/self/fd, after checking that what is
 * there is the very link the walk saw (device and inode); elsewhere it is checked by path before
 * and after reading it.
 */
export function readSeenLink(tree: Tree, rel: RelPath, seen: EntryStat): Buffer {
  if (process.platform !== 'linux') return readLinkAt(tree, rel, fsPath(tree.bytes, rel), seen);
  const slash = rel.lastIndexOf('/');
  const dirRel = slash === -1 ? '' : rel.slice(0, slash);
  const name = rel.slice(slash + 1);
  // The root is as the user named it (it may be a link they made); below it, never a link.
  const flags = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | (dirRel === '' ? 0 : fs.constants.O_NOFOLLOW);
  let dirFd: number;
  try {
    dirFd = fs.openSync(fsPath(tree.bytes, dirRel), flags);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOENT' || code === 'ENOTDIR') throw changedUnderUs(tree, rel);
    throw systemError('read the link', showRel(tree.root, rel), err);
  }
  try {
    return readLinkAt(tree, rel, Buffer.concat([Buffer.from(`/proc/self/fd/${dirFd}/`), Buffer.from(name, 'latin1')]), seen);
  } finally {
    fs.closeSync(dirFd);
  }
}

const CHUNK = 1 << 20;
let bufA: Buffer | undefined;
let bufB: Buffer | undefined;

function readFull(fd: number, buf: Buffer, tree: Tree, rel: RelPath): number {
  let n = 0;
  while (n < buf.length) {
    let got: number;
    try {
      got = fs.readSync(fd, buf, n, buf.length - n, null);
    } catch (err) {
      throw systemError('read', showRel(tree.root, rel), err);
    }
    if (got === 0) break;
    n += got;
  }
  return n;
}

/** Whether two regular files hold the same bytes; reads them side by side, a chunk at a time. */
export function sameContent(a: Tree, b: Tree, rel: RelPath, seenA: EntryStat, seenB: EntryStat): boolean {
  bufA ??= Buffer.allocUnsafe(CHUNK);
  bufB ??= Buffer.allocUnsafe(CHUNK);
  const fdA = openSeen(a, rel, seenA);
  let fdB: number | undefined;
  try {
    fdB = openSeen(b, rel, seenB);
    for (;;) {
      const nA = readFull(fdA, bufA, a, rel);
      const nB = readFull(fdB, bufB, b, rel);
      if (nA !== nB) return false;
      if (nA === 0) return true;
      if (bufA.compare(bufB, 0, nB, 0, nA) !== 0) return false;
      if (nA < CHUNK) return true;
    }
  } finally {
    fs.closeSync(fdA);
    if (fdB !== undefined) fs.closeSync(fdB);
  }
}
