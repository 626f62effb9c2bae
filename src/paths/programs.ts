// Finding a program that arb runs outside a sandbox (git, gh, an asker, ps, rm): by an absolute
// path, found once, never in a directory a confined command could write. A PATH entry inside the
// directory a command works in (node_modules/.bin added by npm run, a project's bin added by
// direnv), inside a -w path, /tmp or a cache would let the command plant a `git` that arb then
// runs with the user's full rights.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { isInsideAny } from './inside';

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
  return isInsideAny(file, untrusted, 'lexical') || isInsideAny(file, untrusted, 'resolved');
}

/**
 * The first executable file called `name` in an absolute PATH entry that is not in (nor leads into)
 * any of `untrusted`; undefined if there is none. Relative and empty entries (the working
 * directory) are skipped.
 */
export function findProgram(name: string, searchPath: string | undefined, untrusted: readonly string[] = []): string | undefined {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    if (isUntrusted(dir, untrusted)) continue;
    const file = path.join(dir, name);
    try {
      const st = fs.statSync(file);
      if (!st.isFile()) continue;
      fs.accessSync(file, fs.constants.X_OK);
    } catch {
      continue;
    }
    if (isUntrusted(file, untrusted)) continue;
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
