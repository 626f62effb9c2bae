// Which running processes work in a directory: their working directory, root or an open file is
// there. --prune keeps a fork one works in; arb diff warns that such a fork may still change.
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as native from '../native';
import { isInside } from '../paths/inside';

export type ProcessPlace = { pid: number; place: string };

/** processPlaces with fs calls (where the addon cannot be loaded; exported for tests). */
export function processPlacesInJs(): ProcessPlace[] {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const out: ProcessPlace[] = [];
  const add = (pid: string, link: string) => {
    try {
      out.push({ pid: Number(pid), place: fs.readlinkSync(link) });
    } catch {
      /* gone, or not ours to see */
    }
  };
  for (const pid of pids) {
    add(pid, `/proc/${pid}/cwd`);
    add(pid, `/proc/${pid}/root`);
    let fds: string[] = [];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      /* not ours to see */
    }
    for (const fd of fds) add(pid, `/proc/${pid}/fd/${fd}`);
  }
  return out;
}

/**
 * Where running processes are: each one's working directory, root and open files, as far as
 * /proc lets this user see (Linux; elsewhere nothing is known, and nothing is kept for it). Read
 * by the addon where it is loaded: done with fs calls, every readlink /proc refuses (kernel
 * threads, other users' processes) is a JavaScript exception, and arb diff spent 15 ms here.
 */
export function processPlaces(): ProcessPlace[] {
  if (process.platform !== 'linux') return [];
  if (!native.hasProcessPlaces()) return processPlacesInJs();
  try {
    // As fs.readlinkSync gives a link: its bytes read as UTF-8.
    return native.processPlaces().map(({ pid, place }) => ({ pid, place: place.toString('utf8') }));
  } catch {
    return [];
  }
}

/** Every process working in `dir` (by its real path), each pid once. */
export function processesIn(dir: string, places: ProcessPlace[] = processPlaces()): number[] {
  let real: string;
  try {
    real = fs.realpathSync(dir);
  } catch {
    return [];
  }
  // A pipe's or a socket's link reads 'pipe:[N]': no path, and never resolved against arb's own
  // working directory (from inside a fork, every pipe would seem to be there).
  return [...new Set(places.filter((p) => path.isAbsolute(p.place) && isInside(p.place, real, 'lexical')).map((p) => p.pid))];
}
