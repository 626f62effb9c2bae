// The bwrap jail: the command runs under bubblewrap, in new namespaces, seeing the host
// read-only through the one mount plan every Linux jail renders (src/confine/mount-plan.ts: the
// home directories, /run and $XDG_RUNTIME_DIR masked with what is granted bound back, a private
// /tmp, /dev/shm and $TMPDIR, what runs later kept read-only), with bwrap's own /dev and /proc.
// Inside, bwrap runs confine's launcher, which applies the same Landlock ruleset and seccomp
// filter as the landlock jail (signals and abstract unix sockets scoped on ABI 6) before it execs
// the command, so the jail closes what the landlock jail closes. `--mount` specs
// (src/confine/mounts.ts) come last, in order; --no-network is bwrap's network namespace.
//
// bwrapArgs is pure and builds the whole argument list from the mount plan and the entries of
// the host's `/` (rootEntries).
//
// Why `/` is not simply `--ro-bind / /`: bwrap makes each mount point it needs, and under a
// read-only `/` it cannot, so `--mount rw:SRC:/data` would fail for a /data that the host lacks.
// Instead the jail's root stays bwrap's own tmpfs, each entry of the host's `/` is bound on it
// read-only (links remade as links), every mount is applied, and only then is the root remounted
// read-only. Writing anywhere under `/` but the granted paths still fails with EROFS. An entry
// made in the host's `/` after the command starts is not seen.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError } from '../errors';
import { isInside } from '../paths/inside';
import { findProgram } from '../paths/programs';
import { FS, grantRights } from './landlock';
import type { LandlockRuleset } from './landlock';
import { MountPlan, bwrapMasks, bwrapMountArgs } from './mount-plan';
import { MountSpec, mountArgs } from './mounts';

/** An entry of the host's `/`, as the jail remakes it. */
export interface RootEntry {
  name: string;
  /** Links are remade as the same link; everything else is bound read-only. */
  kind: 'link' | 'other';
  /** A link's target, as readlink gives it. */
  target?: string;
}

export interface BwrapPlan {
  /** The directory the command runs in (absolute). */
  dir: string;
  /** The home directories (masked by the mount plan). */
  homes: readonly string[];
  /** The one mount plan (src/confine/mount-plan.ts), rendered here as bwrap's arguments. */
  mounts: MountPlan;
  /** The entries of the host's `/` (rootEntries). */
  root: readonly RootEntry[];
  /** `--mount` specs, applied after the plan in this order. */
  userMounts?: readonly MountSpec[];
  /** Keep the host's network (false: --no-network, bwrap's network namespace, loopback only). */
  shareNetwork: boolean;
  /** Files bound read-only at their own path last, such as the launcher, wherever it lives. */
  bindFiles?: readonly string[];
  /** What bwrap runs (absolute) and its arguments: the launcher. */
  file: string;
  args: readonly string[];
  /** A descriptor bwrap writes its JSON status to (child-pid, exit-code). */
  statusFd?: number;
}

// Directories the jail makes its own rather than binding from the host.
const JAIL_DEV = '/dev';
const JAIL_PROC = '/proc';

function normal(p: string): string {
  const n = path.posix.normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

/** The whole bwrap argument list (without `bwrap` itself). Pure. */
export function bwrapArgs(plan: BwrapPlan): string[] {
  for (const h of plan.homes) {
    if (!path.posix.isAbsolute(h) || normal(h) === '/') {
      throw new ArbError('ARB_UNSUPPORTED', `cannot mask the home directory '${h}' in the bwrap jail: it must be an absolute path other than /`, {
        hint: 'set HOME to your home directory',
      });
    }
  }
  if (plan.homes.length === 0) throw new ArbError('ARB_INTERNAL', 'the bwrap jail was given no home directory to mask');
  if (!path.posix.isAbsolute(plan.dir)) {
    throw new ArbError('ARB_INTERNAL', `the directory '${plan.dir}' given to the bwrap jail is not absolute`);
  }
  const a: string[] = [];
  // Every namespace (the network's too with --no-network): the command sees no other process,
  // IPC object or host name. It dies when arb does, and runs in a new session, so it cannot push
  // input into arb's terminal (TIOCSTI).
  a.push('--unshare-all');
  if (plan.shareNetwork) a.push('--share-net');
  a.push('--die-with-parent', '--new-session');

  // The host's `/`, read-only (writable with -w /), entry by entry (see the file comment); an
  // entry the plan replaces whole (/tmp, /run) is not bound first.
  const replaced = new Set(plan.mounts.ops.filter((op) => op.kind === 'mask' || op.kind === 'tmpfs').map((op) => op.path));
  for (const e of [...plan.root].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) {
    const at = `/${e.name}`;
    if (at === JAIL_DEV || at === JAIL_PROC || replaced.has(at) || e.name === '' || e.name === '.' || e.name === '..' || e.name.includes('/')) continue;
    if (e.kind === 'link' && e.target !== undefined) a.push('--symlink', e.target, at);
    else a.push(plan.mounts.readOnlyRoot ? '--ro-bind' : '--bind', at, at);
  }
  // Its own /dev (null, zero, full, random, urandom, tty, a devpts of its own, the terminal at
  // /dev/console) and /proc (its own processes only).
  a.push('--dev', JAIL_DEV, '--proc', JAIL_PROC);
  // The mount plan, in its order: parents before what is inside them.
  a.push(...bwrapMountArgs(plan.mounts));
  // The user's mounts, after the defaults, so that one can override a default for the same
  // destination (e.g. tmpfs:/tmp for an ephemeral /tmp over a fork under /tmp).
  for (const m of plan.userMounts ?? []) a.push(...mountArgs(m));
  for (const f of plan.bindFiles ?? []) a.push('--ro-bind', f, f);
  // Only now, with every mount point made, the masks become read-only: writing in the home, /run
  // or `/` outside what is granted fails (EROFS) as it fails under Landlock (EACCES). Each
  // remount is of that file system alone, not of what is mounted on it. A mask that a --mount
  // was put on, or over, is left alone: the remount would make that mount read-only instead.
  const later = (plan.userMounts ?? []).map((m) => m.dest);
  const remount = [...bwrapMasks(plan.mounts), ...(plan.mounts.readOnlyRoot ? ['/'] : [])];
  for (const mask of remount) {
    if (!later.some((d) => isInside(mask, d, 'lexical'))) a.push('--remount-ro', mask);
  }

  a.push('--chdir', normal(plan.dir));
  if (plan.statusFd !== undefined) a.push('--json-status-fd', String(plan.statusFd));
  a.push('--', plan.file, ...plan.args);
  return a;
}

/**
 * Whether the jail shows a host path (read-only at least): it does unless a mask or private
 * tmpfs of the mount plan holds it and no bind brings it back. Used to refuse, with a hint, a
 * command that exists outside but that the jail hides (e.g. ~/scripts/tool).
 */
export function visibleInJail(p: string, plan: Pick<BwrapPlan, 'mounts' | 'userMounts'>): boolean {
  const file = normal(p);
  if ((plan.userMounts ?? []).some((m) => m.source !== undefined && m.source === m.dest && isInside(file, m.dest, 'lexical'))) return true;
  let nearest: MountPlan['ops'][number] | undefined;
  for (const op of plan.mounts.ops) {
    if (op.kind === 'symlink' || !isInside(file, op.path, 'lexical')) continue;
    if (!nearest || op.path.length > nearest.path.length) nearest = op;
  }
  return nearest === undefined || nearest.kind === 'bind-ro' || nearest.kind === 'bind-rw';
}

/**
 * What Landlock grants, inside the jail, to the destinations of --mount: the user asked to
 * write to an rw or tmpfs mount and to read an ro or proc one. The launcher opens each path inside
 * the jail, where it exists.
 */
export function mountRules(mounts: readonly MountSpec[], abi: number): LandlockRuleset['rules'] {
  return mounts.map((m) => {
    const access = m.type === 'rw' || m.type === 'tmpfs' ? 'write' : 'read';
    let rights = grantRights({ access, isDirectory: true }, abi);
    if (m.type === 'dev') rights |= grantRights({ access: 'write', isDirectory: true }, abi) & (FS.WRITE_FILE | FS.IOCTL_DEV);
    return { path: m.dest, access: rights };
  });
}

// --- facts and running: the only parts that touch the system ------------------------------

/**
 * Finds the bwrap program on PATH, in none of `untrusted` (where a command could have put one:
 * bwrap runs outside, as the user). A missing one is an error naming the package to install,
 * never a reason to run the command without the jail.
 */
export function findBwrap(searchPath: string | undefined = process.env.PATH, fallbacks: readonly string[] = ['/usr/bin', '/bin'], untrusted: readonly string[] = []): string {
  const lookUp = (skip: readonly string[]) => findProgram('bwrap', searchPath, skip) ?? findProgram('bwrap', fallbacks.join(path.delimiter), skip);
  const found = lookUp(untrusted);
  if (found !== undefined) return found;
  const planted = untrusted.length > 0 ? lookUp([]) : undefined;
  if (planted !== undefined) {
    throw new ArbError('ARB_UNSUPPORTED', `cannot use the bwrap jail: the only bwrap found, '${planted}', is where the confined command may write, and bwrap runs outside, as you`, {
      hint: 'put bubblewrap in a directory the command cannot write (install the package bubblewrap), or use --jail landlock',
    });
  }
  throw new ArbError('ARB_UNSUPPORTED', "cannot use the bwrap jail: bubblewrap's program 'bwrap' is not installed (not found on PATH)", {
    hint: 'install the package bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap), or use --jail landlock',
  });
}

/** The entries of the host's `/`, as the jail remakes them. */
export function rootEntries(): RootEntry[] {
  const root: RootEntry[] = [];
  for (const d of fs.readdirSync('/', { withFileTypes: true })) {
    if (d.isSymbolicLink()) {
      root.push({ name: d.name, kind: 'link', target: fs.readlinkSync(`/${d.name}`) });
    } else {
      root.push({ name: d.name, kind: 'other' });
    }
  }
  return root;
}

/** The fd bwrap writes its status to: the first after stdin, stdout and stderr. */
export const STATUS_FD = 3;

/** One argument as a shell would need it quoted, for -v. */
export function shellQuote(a: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/** The "exit-code" bwrap reported on its JSON status descriptor, if it did. */
export function exitCodeFromStatus(status: string): number | undefined {
  let exit: number | undefined;
  // bwrap writes one JSON document per line.
  for (const line of status.split('\n')) {
    if (!line.trim()) continue;
    try {
      const doc = JSON.parse(line) as Record<string, unknown>;
      if (typeof doc['exit-code'] === 'number') exit = doc['exit-code'];
    } catch {
      /* a partial line from a bwrap that died: no report */
    }
  }
  return exit;
}

