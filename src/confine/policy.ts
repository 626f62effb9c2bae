// What a confined command may read and write, as a list of grants: pure decisions over a view of
// the file system (FsView), so they are tested with a fake one. Landlock (landlock.ts) and
// bubblewrap (bwrap.ts) both take these grants.
//
// Landlock can only grant, to a path and everything under it, and cannot take away what a grant
// above gives. So the home directory is never granted: reading (and running) is granted to what
// is around it instead. For each directory from / down to the home directory's parent, every
// entry but the one leading to the home directory is granted. Then the readable paths, the
// writable ones, and the directory the command works in.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { isInside } from '../paths/inside';

/** list: directory names only; read: reading and running; write: everything. */
export type Access = 'list' | 'read' | 'write';

export interface Grant {
  /** The path as granted: absolute, links resolved. */
  path: string;
  access: Access;
  /** A directory (rights apply beneath it) or not (only file rights apply). */
  isDirectory: boolean;
  /** Writable paths only: may connect to unix sockets made outside (Landlock ABI 9). */
  sockets?: boolean;
  /** Why it is granted, one line (shown by -v). */
  why: string;
  /** The path as named, when resolving links changed it. */
  given?: string;
}

/** The look at the file system the policy needs; nodeFs is the real one. */
export interface FsView {
  /** The path with every link resolved, or undefined if it does not exist. */
  realpath(p: string): string | undefined;
  /** The names in a directory, or undefined if it cannot be listed. */
  readdir(p: string): string[] | undefined;
  /** Whether the path (links followed) is a directory. */
  isDirectory(p: string): boolean;
  /** Whether the path (links followed) is a regular file someone may run (a mode bit x). Views
   *  without it grant no packages of programs on $PATH. */
  isExecutableFile?(p: string): boolean;
  /** Whether the path itself is a symbolic link (not followed). Views without it resolve every
   *  entry of a $PATH directory to learn where it leads. */
  isSymlink?(p: string): boolean;
}

export const nodeFs: FsView = {
  realpath(p) {
    try {
      return fs.realpathSync.native(p);
    } catch {
      return undefined;
    }
  },
  readdir(p) {
    try {
      return fs.readdirSync(p);
    } catch {
      return undefined;
    }
  },
  isDirectory(p) {
    try {
      return fs.statSync(p).isDirectory();
    } catch {
      return false;
    }
  },
  isExecutableFile(p) {
    try {
      const st = fs.statSync(p);
      return st.isFile() && (st.mode & 0o111) !== 0;
    } catch {
      return false;
    }
  },
  isSymlink(p) {
    try {
      return fs.lstatSync(p).isSymbolicLink();
    } catch {
      return false;
    }
  },
};

export interface PolicyInput {
  /** Home directories whose contents are kept from the command: the user's (from the password
   *  database) and $HOME where it differs. */
  homes: readonly string[];
  /** The home directory `~` means for the default paths ($HOME, else the user's). */
  home: string;
  /** The directory the command works in (already resolved). */
  dir: string;
  /** $PATH: its entries in the home directory are readable. */
  pathVar?: string;
  /** $TMPDIR: writable. */
  tmpdir?: string;
  /** -r paths, absolute. */
  readable?: readonly string[];
  /** -w paths, absolute. */
  writable?: readonly string[];
  /** Further writable paths that steps add (a socket directory for the broker), absolute. */
  extraWritable?: readonly { path: string; why: string; sockets?: boolean }[];
}

export interface Policy {
  /** The protected home directories, resolved, none inside another. */
  homes: string[];
  grants: Grant[];
  /** Paths left out, and why (shown by -v). */
  skipped: { path: string; why: string }[];
  /** Said on stderr every time. */
  warnings: string[];
}

/** Readable in the home directory, by default: what commands need to run. */
export const HOME_READABLE: readonly { rel: string; why: string }[] = [
  { rel: '.gitconfig', why: "git's configuration" },
  { rel: '.config/git', why: "git's configuration" },
  { rel: '.local/bin', why: 'programs installed for the user' },
  { rel: '.nvm', why: 'node versions (nvm)' },
];

/** Writable in the home directory, by default: build and package manager caches. */
export const HOME_WRITABLE: readonly { rel: string; why: string }[] = [
  { rel: '.cargo', why: "cargo's registry and builds" },
  { rel: '.rustup', why: 'rust toolchains' },
  { rel: '.cache', why: 'caches (pip, go, node-gyp, …)' },
  { rel: '.npm', why: "npm's cache" },
];

/**
 * Where the command's view hides what is there on the host (the home directory, and the private
 * /tmp and /dev/shm of the namespaces): $PATH entries there, and the packages of the programs in
 * them, are granted so that programs installed there still run.
 */
export const HIDDEN_OUTSIDE_HOME: readonly string[] = ['/tmp', '/dev/shm'];

/**
 * Files whose directory is a package a program belongs to: npm's (package.json, also for a
 * prefix's node_modules/.bin and nvm's versions), a Python virtual environment's (pyvenv.cfg:
 * pipx's and uv's tools).
 */
export const PACKAGE_MARKERS: readonly string[] = ['package.json', 'pyvenv.cfg'];

/**
 * The package a program (a file, links resolved) belongs to: the nearest directory above it,
 * below `root`, holding a package marker; else the file itself (Claude Code's installer puts one
 * file per version, ~/.local/share/claude/versions/X). What a link on $PATH leads to runs with
 * the rest of its package: codex.js finds its native binary in its own node_modules.
 */
export function packageOf(file: string, root: string, view: FsView): string {
  for (let d = path.dirname(file); d !== root && isInside(d, root, 'lexical') && d !== '/'; d = path.dirname(d)) {
    if (PACKAGE_MARKERS.some((m) => view.realpath(path.join(d, m)) !== undefined)) return d;
  }
  return file;
}

/**
 * The packages of the programs in a $PATH directory that lead elsewhere under `roots` (links to
 * a package, as npm, nvm and Claude Code's installer make them). Only links to files that can be
 * run: a link to a secret is not a program.
 */
export function packagesOnPath(entry: string, roots: readonly string[], view: FsView): { path: string; given: string }[] {
  if (!view.isExecutableFile) return [];
  const out: { path: string; given: string }[] = [];
  for (const name of (view.readdir(entry) ?? []).sort()) {
    const given = path.join(entry, name);
    // Only a link leads out of the (resolved) directory: a file in it needs no resolving, and a
    // directory of shims (pyenv's, cargo's) holds hundreds.
    if (view.isSymlink && !view.isSymlink(given)) continue;
    const real = view.realpath(given);
    if (real === undefined || isInside(real, entry, 'lexical')) continue;
    const root = roots.find((r) => isInside(real, r, 'lexical'));
    if (root === undefined || !view.isExecutableFile(real)) continue;
    out.push({ path: packageOf(real, root, view), given });
  }
  return out;
}

/**
 * Makes the default caches that do not exist yet (mode 0700), so that a new user's first
 * `npm install` or `cargo build` can write its cache: a jail grants only what exists. Nothing is
 * made where the home directory itself is missing; a cache that cannot be made is left out, as
 * before (the policy skips it).
 */
export function ensureHomeCaches(home: string): string[] {
  const made: string[] = [];
  if (!fs.existsSync(home)) return made;
  for (const { rel } of HOME_WRITABLE) {
    const p = path.join(home, rel);
    try {
      fs.mkdirSync(p, { mode: 0o700 });
      made.push(p);
    } catch {
      /* there already (or a link, or not makeable): the policy decides */
    }
  }
  return made;
}

/** Writable outside the home directory: temporary directories and harmless devices. */
export const SYSTEM_WRITABLE: readonly { path: string; why: string }[] = [
  { path: '/tmp', why: 'temporary files' },
  { path: '/var/tmp', why: 'temporary files' },
  { path: '/dev/null', why: 'a harmless device' },
  { path: '/dev/zero', why: 'a harmless device' },
  { path: '/dev/full', why: 'a harmless device' },
  { path: '/dev/random', why: 'a harmless device' },
  { path: '/dev/urandom', why: 'a harmless device' },
  { path: '/dev/tty', why: 'the terminal' },
  { path: '/dev/pts', why: 'the terminal' },
  { path: '/dev/ptmx', why: 'new pseudo-terminals (script, tmux, expect)' },
  { path: '/dev/shm', why: 'shared memory' },
];

/** The directories strictly above `p`, from / down to its parent. */
export function ancestors(p: string): string[] {
  const out: string[] = [];
  let d = path.dirname(p);
  for (;;) {
    out.unshift(d);
    if (d === '/') break;
    d = path.dirname(d);
  }
  return out;
}

/** Resolves the home directories and keeps those not inside another one. */
export function protectedHomes(homes: readonly string[], view: FsView): string[] {
  const resolved = new Set<string>();
  for (const h of homes) {
    if (!path.isAbsolute(h)) continue;
    // A home that does not exist has nothing to protect, but its name is still kept from the
    // grants around it, in case it is made while the command runs.
    resolved.add(view.realpath(h) ?? path.normalize(h));
  }
  const list = [...resolved];
  return list.filter((h) => !list.some((other) => other !== h && isInside(h, other, 'lexical')));
}

/** Whether a path is a protected home, inside one, or above one (so granting it reaches one). */
function reachesHome(p: string, homes: readonly string[]): boolean {
  return homes.some((h) => isInside(p, h, 'lexical') || isInside(h, p, 'lexical'));
}

/** Whether the directory a command would work in is a home directory or holds one. */
export function holdsHome(dir: string, homes: readonly string[]): string | undefined {
  return homes.find((h) => isInside(h, dir, 'lexical'));
}

/**
 * Reading and running, granted around the home directories: each entry of each directory above
 * them but the ones leading to them. Entries that are links are granted at their target, unless
 * it is in (or above) a home directory.
 */
export function aroundHomes(homes: readonly string[], view: FsView, policy: Policy): void {
  // Listing is granted from / down, so that / and the directories above the home directory can
  // be listed; Landlock grants it to everything beneath, so names in the home directory (not
  // their contents) can be listed too.
  policy.grants.push({ path: '/', access: 'list', isDirectory: true, why: 'names in every directory (not what is in the files)' });
  const above = new Set<string>();
  for (const h of homes) for (const a of ancestors(h)) above.add(a);
  const onPath = (p: string) => above.has(p) || homes.includes(p);
  for (const dir of [...above].sort()) {
    const names = view.readdir(dir);
    if (!names) {
      policy.skipped.push({ path: dir, why: 'cannot be listed, so nothing in it is readable' });
      continue;
    }
    for (const name of names.sort()) {
      const entry = dir === '/' ? `/${name}` : `${dir}/${name}`;
      if (onPath(entry)) continue;
      const real = view.realpath(entry);
      if (real === undefined) continue; // a dangling link
      if (reachesHome(real, homes)) {
        policy.skipped.push({ path: entry, why: `leads to ${real}, in or above the home directory` });
        continue;
      }
      policy.grants.push({
        path: real,
        access: 'read',
        isDirectory: view.isDirectory(real),
        why: `around the home directory (in ${dir})`,
        ...(real !== entry ? { given: entry } : {}),
      });
    }
  }
}

interface Wanted {
  path: string;
  access: Access;
  why: string;
  /** Named by the user (-r, -w): kept even where it reaches a home, with a warning. */
  explicit?: string;
  sockets?: boolean;
}

function addWanted(w: Wanted, homes: readonly string[], view: FsView, policy: Policy): void {
  const real = view.realpath(w.path);
  if (real === undefined) {
    if (w.explicit) policy.warnings.push(`${w.explicit} ${w.path}: no such file or directory, so it is not granted`);
    else policy.skipped.push({ path: w.path, why: 'does not exist' });
    return;
  }
  const home = homes.find((h) => isInside(h, real, 'lexical'));
  if (home !== undefined) {
    if (!w.explicit) {
      policy.warnings.push(`not granting ${w.path} (${w.why}): it leads to ${real}, which holds the home directory ${home}`);
      return;
    }
    policy.warnings.push(`${w.explicit} ${w.path} gives the command the home directory ${home}, secrets included`);
  }
  policy.grants.push({
    path: real,
    access: w.access,
    isDirectory: view.isDirectory(real),
    why: w.why,
    ...(w.sockets ? { sockets: true } : {}),
    ...(real !== w.path ? { given: w.path } : {}),
  });
}

/** The private directories outside the home that hold $TMPDIR's and /tmp's contents, resolved. */
function hiddenOutsideHome(tmpdir: string | undefined, view: FsView): string[] {
  const out: string[] = [];
  for (const p of [...HIDDEN_OUTSIDE_HOME, ...(tmpdir && path.isAbsolute(tmpdir) ? [tmpdir] : [])]) {
    const real = view.realpath(p);
    if (real !== undefined && real !== '/') out.push(real);
  }
  return out;
}

/** The whole policy: around the home directories, then readable, writable, the directory. */
export function buildPolicy(input: PolicyInput, view: FsView = nodeFs): Policy {
  const homes = protectedHomes(input.homes, view);
  const policy: Policy = { homes, grants: [], skipped: [], warnings: [] };
  aroundHomes(homes, view, policy);

  const wanted: Wanted[] = [];
  for (const { rel, why } of HOME_READABLE) wanted.push({ path: path.join(input.home, rel), access: 'read', why });
  // Toolchains on $PATH inside the home directory (~/.cargo/bin, ~/go/bin, ~/.bun/bin, …). An
  // entry outside it that leads inside it is granted too; one that holds it is refused. So are
  // entries in the private /tmp (an npm prefix there), which would otherwise vanish inside.
  const hidden = [...homes, ...hiddenOutsideHome(input.tmpdir, view)];
  const programDirs = [path.join(input.home, '.local/bin')];
  const entries = new Set<string>();
  for (const entry of (input.pathVar ?? '').split(':')) {
    if (!path.isAbsolute(entry)) continue; // relative entries mean the directory, granted below
    // An entry PATH names twice (a shell profile run twice prepends it again) is granted once.
    const dir = path.resolve(entry);
    if (entries.has(dir)) continue;
    entries.add(dir);
    const real = view.realpath(dir);
    if (real !== undefined && hidden.some((h) => isInside(real, h, 'lexical') || isInside(h, real, 'lexical'))) {
      wanted.push({ path: dir, access: 'read', why: 'on $PATH' });
      programDirs.push(dir);
    }
  }
  // What the programs there link to, with the package each belongs to (an npm prefix's
  // lib/node_modules/PKG, nvm's versions, Claude Code's versions/X): nothing else around it.
  const seen = new Set<string>();
  for (const d of programDirs) {
    const real = view.realpath(d);
    if (real === undefined || seen.has(real) || homes.some((h) => isInside(h, real, 'lexical'))) continue;
    seen.add(real);
    for (const pkg of packagesOnPath(real, hidden, view)) {
      if (seen.has(pkg.path)) continue;
      seen.add(pkg.path);
      wanted.push({ path: pkg.path, access: 'read', why: `the package of ${pkg.given}, a program on $PATH` });
    }
  }
  for (const r of input.readable ?? []) wanted.push({ path: r, access: 'read', why: 'given with -r', explicit: '-r' });

  for (const { path: p, why } of SYSTEM_WRITABLE) wanted.push({ path: p, access: 'write', why });
  if (input.tmpdir && path.isAbsolute(input.tmpdir)) wanted.push({ path: path.normalize(input.tmpdir), access: 'write', why: '$TMPDIR' });
  for (const { rel, why } of HOME_WRITABLE) wanted.push({ path: path.join(input.home, rel), access: 'write', why });
  for (const e of input.extraWritable ?? []) wanted.push({ path: e.path, access: 'write', why: e.why, sockets: e.sockets });
  for (const w of input.writable ?? []) wanted.push({ path: w, access: 'write', why: 'given with -w', explicit: '-w', sockets: true });

  for (const w of wanted) addWanted(w, homes, view, policy);

  // The directory last; run.ts has already refused one that holds a home directory.
  policy.grants.push({ path: input.dir, access: 'write', isDirectory: true, sockets: true, why: 'the directory the command works in' });
  return policy;
}

/**
 * Whether the command could read `file` under the policy: outside the home directories
 * everything is readable; inside, only under a grant.
 */
export function canRead(file: string, policy: Pick<Policy, 'homes' | 'grants'>): boolean {
  if (!policy.homes.some((h) => isInside(file, h, 'lexical'))) return true;
  return policy.grants.some((g) => g.access !== 'list' && isInside(file, g.path, 'lexical'));
}
