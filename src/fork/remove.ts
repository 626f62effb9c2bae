// Removing a half-made (or finished) fork or base. Directories in it may have been given a mode
// without write permission (the source's), which rm -rf as a user cannot get through; those are
// made writable on the way down and removed again.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Removes `p` and everything under it, whatever the modes inside; never follows links. */
export function removeTree(p: string): void {
  try {
    fs.rmSync(p, { recursive: true, force: true, maxRetries: 2 });
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'ENOTEMPTY') throw err;
  }
  makeWritable(p);
  fs.rmSync(p, { recursive: true, force: true, maxRetries: 2 });
}

// Changed through a descriptor opened without following a link, never by path: a directory
// swapped for a link (by a process left running in a fork) between a look and a chmod by path
// would have the chmod follow it out of the tree. On Linux an O_PATH descriptor (which needs no
// read permission, so a directory of mode 0000 can be opened) is changed through
// /proc/self/fd/N, which names that very inode; elsewhere, a directory opened to read.
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = fs.constants;
const O_PATH = 0o10000000; // Linux: not in fs.constants

/** Gives the owner rwx on `dir` and every directory under it, following no link. */
export function makeWritable(dir: string): void {
  const linux = process.platform === 'linux';
  let fd: number;
  try {
    fd = fs.openSync(dir, (linux ? O_PATH : O_RDONLY) | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return; // gone, not a directory, or a link: rmSync will say
  }
  try {
    if (linux) fs.chmodSync(`/proc/self/fd/${fd}`, 0o700);
    else fs.fchmodSync(fd, 0o700);
  } catch {
    /* not ours to change: rmSync will say */
  } finally {
    fs.closeSync(fd);
  }
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) makeWritable(path.join(dir, name));
}
