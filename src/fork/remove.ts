// Removing a fork or a base (a half-made one, one confine --rm is done with, one --prune removes).
// A process left running in it may still be changing it: removal by path (fs.rmSync, rm of
// a/b/c then a/b) could be made to follow a directory swapped for a link mid-removal, out of the
// tree. So the addon removes by descriptors (native/posix/remove_tree.cc): each directory opened
// relative to its parent's descriptor without following a link, each entry unlinked relative to
// it, never into another file system, and directories without write permission (kept from the
// source) given rwx for their owner through those descriptors. Without the addon (a build that
// lacks removeTree), `rm -rf` does it: GNU and BSD rm walk with fts, by descriptors too.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError, systemError } from '../errors';
import { hasRemoveTree, removeTree as removeNatively } from '../native';
import { systemProgram } from '../paths/programs';

/** What removeTree found: removed (or nothing there), or left as it was. */
export type Removal = 'removed' | 'gone' | 'not-directory' | 'other';

/**
 * Removes the directory `p` and everything under it, whatever the modes inside; never follows a
 * link in it, and a link at `p` itself is left. With `expect`, only if `p` is that directory
 * (device and inode): what was examined. Throws an ArbError naming what could not be removed.
 */
export function removeTree(p: string | Buffer, expect?: { dev: number; ino: number }): Removal {
  const full = typeof p === 'string' ? Buffer.from(path.resolve(p)) : p;
  const text = full.toString('latin1');
  const slash = text.lastIndexOf('/');
  const parent = Buffer.from(slash === 0 ? '/' : text.slice(0, slash), 'latin1');
  const name = Buffer.from(text.slice(slash + 1), 'latin1');
  const shown = full.toString();
  if (!hasRemoveTree()) return removeWithRm(shown, expect);
  try {
    return removeNatively(parent, name, expect);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const where = e.path ? path.join(path.dirname(shown), e.path) : shown;
    throw systemError('remove', where, err);
  }
}

/** The fallback: rm -rf, after a look that it is the directory expected. */
function removeWithRm(p: string, expect?: { dev: number; ino: number }): Removal {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return 'gone';
  }
  if (!st.isDirectory()) return 'not-directory';
  if (expect && (st.dev !== expect.dev || st.ino !== expect.ino)) return 'other';
  const oneFs = process.platform === 'linux' ? ['--one-file-system'] : [];
  // rm and chmod of the system, never ones on a PATH entry a confined command could write.
  const rm = systemProgram('rm');
  // Loaded here, not at the top: confine imports this module, and starting it needs none of
  // child_process (which brings streams and sockets with it).
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
  let r = spawnSync(rm, ['-rf', ...oneFs, '--', p], { encoding: 'utf8' });
  if (r.status !== 0 && fs.existsSync(p)) {
    spawnSync(systemProgram('chmod'), ['-R', 'u+rwx', '--', p]);
    r = spawnSync(rm, ['-rf', ...oneFs, '--', p], { encoding: 'utf8' });
  }
  if (r.error) throw new ArbError('ARB_IO', `cannot run rm to remove '${p}': ${r.error.message}`);
  if (r.status !== 0) throw new ArbError('ARB_IO', `cannot remove '${p}': ${r.stderr.trim().split('\n').slice(-1)[0] || `rm exited with status ${r.status}`}`);
  return 'removed';
}
