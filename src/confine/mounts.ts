// Mount specifications for the bwrap jail: `--mount TYPE:DEST` or `--mount TYPE:SRC:DEST`, as
// Arborinth takes them. Parsing is pure (parseMount); checking that a source exists is the one
// look at the file system (checkMountSources), so that a bad spec is refused before anything is
// forked or run.
//
// A path may itself contain ':'. The separator is an unescaped ':'; write a ':' that belongs to a
// path as '\:' and a backslash that comes before a ':' or another backslash as '\\'. Any other
// backslash is kept as it is. So `ro:/mnt/a\:b:/data` binds '/mnt/a:b' on '/data'. (Splitting at
// ':' only where a '/' follows would need no escapes, but then `rw:/src:data` would silently
// become one path '/src:data' instead of being refused for its relative destination.)
import * as fs from 'node:fs';
import * as path from 'node:path';

import { usageError } from '../errors';

export type MountType = 'ro' | 'rw' | 'tmpfs' | 'dev' | 'proc';

export const MOUNT_TYPES: readonly MountType[] = ['ro', 'rw', 'tmpfs', 'dev', 'proc'];

const DESCRIBE: Record<MountType, string> = {
  ro: 'read-only bind mount of SRC (default: DEST) on DEST',
  rw: 'read-write bind mount of SRC (default: DEST) on DEST',
  tmpfs: 'an empty in-memory file system on DEST',
  dev: 'a private /dev (null, zero, random, tty, pts…) on DEST',
  proc: 'a procfs for the jail’s processes on DEST',
};

export interface MountSpec {
  type: MountType;
  /** Host path bound on dest: only ro and rw have one (DEST when the spec names none). */
  source?: string;
  /** Where it appears in the jail. */
  dest: string;
  /** The spec as given, for messages. */
  spec: string;
}

/** One line per type, for --help and the man page. */
export function describeMountTypes(): string {
  return MOUNT_TYPES.map((t) => `${t}: ${DESCRIBE[t]}`).join('; ');
}

/** Splits at unescaped ':' and undoes the escapes '\:' and '\\'. */
export function splitSpec(spec: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i];
    if (c === '\\' && (spec[i + 1] === ':' || spec[i + 1] === '\\')) {
      current += spec[i + 1];
      i++;
    } else if (c === ':') {
      parts.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts;
}

/** Writes a path so that splitSpec gives it back whole: the inverse of the escapes. */
export function escapeSpecPath(p: string): string {
  return p.replace(/[\\:]/g, '\\$&');
}

function refuse(spec: string, reason: string): never {
  throw usageError(`--mount '${spec}': ${reason}`);
}

function checkPath(spec: string, which: 'source' | 'destination', p: string): string {
  if (p === '') refuse(spec, `the ${which} path is empty`);
  if (p.includes('\0')) refuse(spec, `the ${which} path contains a NUL byte`);
  if (!path.posix.isAbsolute(p)) refuse(spec, `the ${which} path '${p}' is relative: give an absolute path (starting with /)`);
  // '/a/../b' is '/b'; a trailing '/' is dropped so that the same place has one spelling.
  const normal = path.posix.normalize(p);
  return normal.length > 1 ? normal.replace(/\/+$/, '') : normal;
}

/**
 * Parses one `--mount` value. Throws a usage error (exit 2) that names the spec and what is
 * wrong: an unknown type, too few or too many parts, a source given to tmpfs/dev/proc, an empty
 * or relative path. Does not look at the file system.
 */
export function parseMount(spec: string): MountSpec {
  const parts = splitSpec(spec);
  const type = parts[0];
  if (!(MOUNT_TYPES as readonly string[]).includes(type)) {
    const hint = parts.length === 1 ? ` (the form is TYPE:DEST or TYPE:SRC:DEST)` : '';
    refuse(spec, `unknown mount type '${type}'${hint}: use one of ${MOUNT_TYPES.join(', ')}`);
  }
  const t = type as MountType;
  const takesSource = t === 'ro' || t === 'rw';
  if (parts.length < 2) {
    refuse(spec, `too few parts: the form is ${takesSource ? `${t}:DEST or ${t}:SRC:DEST` : `${t}:DEST`}`);
  }
  if (takesSource) {
    if (parts.length > 3) {
      refuse(spec, `too many parts (${parts.length}): the form is ${t}:DEST or ${t}:SRC:DEST (write a ':' inside a path as '\\:')`);
    }
    const dest = checkPath(spec, 'destination', parts[parts.length - 1]);
    const source = parts.length === 3 ? checkPath(spec, 'source', parts[1]) : dest;
    return { type: t, source, dest, spec };
  }
  if (parts.length > 2) {
    refuse(spec, `${t} takes no source, only a destination: the form is ${t}:DEST (write a ':' inside a path as '\\:')`);
  }
  return { type: t, dest: checkPath(spec, 'destination', parts[1]), spec };
}

/** Parses every `--mount` value, in the order given (the order they are applied in). */
export function parseMounts(specs: readonly string[] | undefined): MountSpec[] {
  return (specs ?? []).map(parseMount);
}

/**
 * Checks that each bind source exists on the host (following links, as bwrap does), so that a
 * typo is refused here rather than by bwrap after a fork was made.
 */
export function checkMountSources(mounts: readonly MountSpec[], exists: (p: string) => boolean = fs.existsSync): void {
  for (const m of mounts) {
    if (m.source !== undefined && !exists(m.source)) {
      refuse(m.spec, `the source '${m.source}' does not exist`);
    }
  }
}

/** The bwrap arguments for one mount. */
export function mountArgs(m: MountSpec): string[] {
  switch (m.type) {
    case 'ro':
      return ['--ro-bind', m.source ?? m.dest, m.dest];
    case 'rw':
      return ['--bind', m.source ?? m.dest, m.dest];
    case 'tmpfs':
      return ['--tmpfs', m.dest];
    case 'dev':
      return ['--dev', m.dest];
    case 'proc':
      return ['--proc', m.dest];
  }
}
