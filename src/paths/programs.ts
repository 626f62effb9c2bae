// Finding a program that arb runs outside a sandbox (git, gh, an asker, ps, rm): by an absolute
// path, found once, never in a directory a confined command could write. A PATH entry inside the
// directory a command works in (node_modules/.bin added by npm run, a project's bin added by
// direnv), inside a -w path, /tmp or a cache would let the command plant a `git` that arb then
// runs with the user's full rights.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { isInsideAny, resolveExisting } from './inside';

/**
 * Where any confined command may write whatever it was given: the temporary directories and the
 * caches in the home directory that confine grants by default (src/confine/policy.ts). A program
 * there is never run outside.
 */
export function commonlyWritable(env: NodeJS.ProcessEnv, home: string | undefined): string[] {
  const out = ['/tmp', '/var/tmp', '/dev/shm'];
  if (env.TMPDIR && path.isAbsolute(env.TMPDIR)) out.push(env.TMPDIR);
  if (home && path.isAbsolute(home)) for (const rel of ['.cache', '.npm', '.cargo', '.rustup']) out.push(path.join(home, rel));
  return out;
}

/** Whether `file` (or the directory it is found in, or what it links to) is among `untrusted`. */
export function isUntrusted(file: string, untrusted: readonly string[]): boolean {
  return untrustedTest(untrusted)(file);
}

/** isUntrusted for many paths against one list, the list's directories resolved once. */
export function untrustedTest(untrusted: readonly string[]): (file: string) => boolean {
  const resolved = untrusted.map(resolveExisting);
  return (file) => isInsideAny(file, untrusted, 'lexical') || isInsideAny(resolveExisting(file), resolved, 'lexical');
}

/**
 * The first executable file called `name` in an absolute PATH entry that is not in (nor leads into)
 * any of `untrusted`; undefined if there is none. Relative and empty entries (the working
 * directory) are skipped.
 */
export function findProgram(name: string, searchPath: string | undefined, untrusted: readonly string[] = []): string | undefined {
  const untrustedPlace = untrustedTest(untrusted);
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    if (untrustedPlace(dir)) continue;
    const file = path.join(dir, name);
    try {
      const st = fs.statSync(file);
      if (!st.isFile()) continue;
      fs.accessSync(file, fs.constants.X_OK);
    } catch {
      continue;
    }
    if (untrustedPlace(file)) continue;
    return file;
  }
  return undefined;
}

/** The system's own directories, which no confined command can write. */
export const SYSTEM_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';

/** A program of the system (ps, rm), found only in SYSTEM_PATH; `name` itself if it is not there. */
export function systemProgram(name: string): string {
  return findProgram(name, SYSTEM_PATH) ?? name;
}

/**
 * Whether this user (and so a command confined as this user, which has fewer rights still) could
 * replace or change `file` by its permissions: the file or a directory above it is ours (chmod
 * would make it writable) or writable by us, but for an entry of a sticky directory (/tmp) that
 * is not ours. Both the path as named (a link in it could be swapped) and what it resolves to are
 * checked. A root-owned checkout under /tmp is not replaceable; one the user owns anywhere is.
 * Root can change everything, and an error answers yes: unsure is unsafe.
 */
export function replaceableByUser(file: string, uid: number | undefined = process.getuid?.()): boolean {
  if (uid === undefined || uid === 0) return true;
  try {
    return chainReplaceable(path.resolve(file), uid) || chainReplaceable(fs.realpathSync(file), uid);
  } catch {
    return true;
  }
}

/** replaceableByUser for one path, each component taken as it is (lstat: a link is an entry). */
function chainReplaceable(p: string, uid: number): boolean {
  const writable = (q: string) => {
    try {
      fs.accessSync(q, fs.constants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  let child = p;
  const st = fs.lstatSync(child);
  if (st.uid === uid || (!st.isSymbolicLink() && writable(child))) return true;
  for (let dir = path.dirname(child); ; child = dir, dir = path.dirname(dir)) {
    const d = fs.statSync(dir);
    if (d.uid === uid) return true;
    // Writable: its entries can be replaced, but in a sticky directory only by their owner.
    if (writable(dir) && ((d.mode & 0o1000) === 0 /* not sticky */ || fs.lstatSync(child).uid === uid)) return true;
    if (dir === '/') return false;
  }
}
