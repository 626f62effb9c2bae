// Where a fork goes and what it is called. The fork of ~/src/turso is ~/src/turso.N (or
// turso.NAME), its base ~/src/.turso.N.base. No state is kept: the names are the record, so two
// forks started at once must never pick the same one, which mkdir(2) guarantees: it either
// makes the directory or fails with EEXIST, atomically.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError, systemError } from '../errors';

/** The longest file name most file systems take (NAME_MAX), in bytes. */
const NAME_MAX = 255;
/** The longest NAME accepted, in bytes, leaving room for the stem and `.base` around it. */
export const MAX_NAME_BYTES = 200;

/**
 * The one rule for fork names (`-n NAME`, and Arborinth's workspace names): refused when empty,
 * '.' or '..', starting with '.', containing '/', NUL or another control character, or longer
 * than 200 bytes. Throws ArbError('ARB_BAD_NAME') saying which rule it broke.
 */
export function validateForkName(name: string): void {
  const bad = (why: string): never => {
    throw new ArbError('ARB_BAD_NAME', `bad fork name ${JSON.stringify(name)}: ${why}`, {
      hint: 'use letters, digits, -, _ and dots not at the start, e.g. -n swebench',
    });
  };
  if (name.length === 0) bad('it is empty');
  if (name === '.' || name === '..') bad('it names a directory, not a fork');
  if (name.includes('/')) bad('it contains a /');
  if (name.includes('\0')) bad('it contains a NUL byte');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(name)) bad('it contains a control character');
  if (name.startsWith('.')) bad('it starts with a dot (bases are the hidden names)');
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) bad(`it is longer than ${MAX_NAME_BYTES} bytes`);
}

import { baseOf } from '../tree/paths';

export { baseOf };

export interface ForkPaths {
  fork: string;
  base: string;
}

/** The fork and base of `dir` named `stem.suffix` beside it. */
export function forkPathsOf(dir: string, suffix: string): ForkPaths {
  const resolved = path.resolve(dir);
  const fork = path.join(path.dirname(resolved), `${path.basename(resolved)}.${suffix}`);
  return { fork, base: baseOf(fork) };
}

/** A fork or base found beside a directory. */
export interface FoundFork {
  /** The suffix: '1' for turso.1, 'swebench' for turso.swebench. */
  name: string;
  /** Absolute path of the fork, if it exists (a directory). */
  fork?: string;
  /** Absolute path of its base, if it exists (a directory). */
  base?: string;
}

/**
 * The forks and bases beside `dir`: for /src/turso, every directory /src/turso.NAME and
 * /src/.turso.NAME.base whose NAME passes validateForkName, paired by NAME, sorted (numbers in
 * numeric order first, then names). A fork whose base is gone, or a base whose fork is gone,
 * comes with only one of the two.
 */
export function findForks(dir: string): FoundFork[] {
  const resolved = path.resolve(dir);
  const parent = path.dirname(resolved);
  const stem = path.basename(resolved);
  const found = new Map<string, FoundFork>();
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(parent, { withFileTypes: true });
  } catch (err) {
    throw systemError('list', parent, err);
  }
  const forkPrefix = `${stem}.`;
  const basePrefix = `.${stem}.`;
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    let name: string | undefined;
    let kind: 'fork' | 'base';
    if (entry.name.startsWith(basePrefix) && entry.name.endsWith('.base') && entry.name.length > basePrefix.length + 5) {
      name = entry.name.slice(basePrefix.length, -'.base'.length);
      kind = 'base';
    } else if (entry.name.startsWith(forkPrefix) && entry.name.length > forkPrefix.length) {
      name = entry.name.slice(forkPrefix.length);
      kind = 'fork';
    } else {
      continue;
    }
    if (!isValidForkName(name)) continue;
    const f = found.get(name) ?? { name };
    f[kind] = path.join(parent, entry.name);
    found.set(name, f);
  }
  return [...found.values()].sort(compareNames);
}

function isValidForkName(name: string): boolean {
  try {
    validateForkName(name);
    return true;
  } catch {
    return false;
  }
}

function compareNames(a: FoundFork, b: FoundFork): number {
  const na = /^[1-9][0-9]*$/.test(a.name) ? Number(a.name) : NaN;
  const nb = /^[1-9][0-9]*$/.test(b.name) ? Number(b.name) : NaN;
  if (!Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
  if (!Number.isNaN(na)) return -1;
  if (!Number.isNaN(nb)) return 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Makes `p` as an empty private directory; false if something is already there. */
function claim(p: string): boolean {
  try {
    fs.mkdirSync(p, { mode: 0o700 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw systemError('make', p, err, hintForMkdir(err));
  }
}

function hintForMkdir(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'the fork is made beside the directory: you need to be able to write there (or give DEST elsewhere)';
  return undefined;
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reserves a fork and its base: makes both as empty directories, so that nobody else can take
 * them. Both must be new; if either exists, throws ARB_EXISTS and leaves nothing made.
 */
export function reservePaths(paths: ForkPaths): ForkPaths {
  for (const p of [paths.fork, paths.base]) {
    if (exists(p)) {
      throw new ArbError('ARB_EXISTS', `cannot fork to '${paths.fork}': '${p}' already exists`, {
        hint: p === paths.fork ? 'choose another name or remove it' : 'a base is left from an earlier fork of that name: remove it, or choose another name',
        path: p,
      });
    }
  }
  if (!claim(paths.fork)) return reservePaths(paths); // taken just now: say so as above
  try {
    if (!claim(paths.base)) {
      fs.rmdirSync(paths.fork);
      return reservePaths(paths);
    }
  } catch (err) {
    fs.rmSync(paths.fork, { recursive: true, force: true });
    throw err;
  }
  return paths;
}

/**
 * Reserves the next numbered fork of `dir`: N is the smallest number ≥ 1 for which neither
 * NAME.N nor .NAME.N.base exists, and taken with mkdir, so that a fork started at the same
 * moment gets another N.
 */
export function reserveNextFork(dir: string): ForkPaths {
  for (let n = 1; ; n++) {
    const paths = forkPathsOf(dir, String(n));
    if (exists(paths.fork) || exists(paths.base)) continue;
    if (!claim(paths.fork)) continue; // another fork took it between the check and now
    try {
      if (claim(paths.base)) return paths;
    } catch (err) {
      fs.rmdirSync(paths.fork);
      throw err;
    }
    fs.rmdirSync(paths.fork);
  }
}

/** NAME_MAX of the fork's and base's file names, checked before anything is made. */
export function checkNameLength(paths: ForkPaths): void {
  for (const p of [paths.fork, paths.base]) {
    if (Buffer.byteLength(path.basename(p)) > NAME_MAX) {
      throw new ArbError('ARB_BAD_NAME', `cannot fork to '${p}': the name is longer than ${NAME_MAX} bytes`, {
        hint: 'use a shorter name',
      });
    }
  }
}
