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

function makeWritable(dir: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return;
  }
  if (!st.isDirectory()) return;
  try {
    fs.chmodSync(dir, 0o700);
  } catch {
    /* not ours to change: rmSync will say */
  }
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) makeWritable(path.join(dir, name));
}
