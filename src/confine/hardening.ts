// Which layers confine puts around the command besides Landlock, decided here: the namespaces
// and the mount plan inside them, the seccomp filter, and what --no-network becomes. The
// native side (native/linux/namespaces.cc, seccomp.cc) only carries the plan out.
//
// Where unprivileged user namespaces work, the command runs in its own user, mount, IPC and PID
// namespaces (and network namespace with --no-network):
//   - every mount read-only, then the writable paths bound back writable: chmod, chown, utime
//     and setxattr outside them fail with EROFS, which Landlock does not cover;
//   - /run, /var/run, $XDG_RUNTIME_DIR and the home directory masked by empty read-only tmpfs,
//     with the readable and writable paths in them bound back: the unix sockets there (Docker,
//     D-Bus, ssh-agent, gpg-agent, systemd --user), which Landlock below ABI 9 lets a command
//     connect to, are gone, and so are the names of the files in the home directory;
//   - a private /tmp, /dev/shm and $TMPDIR (tmux, X11 and ssh-agent sockets gone), the writable
//     paths under them bound back;
//   - a /dev/pts of its own: the user's other terminals, whose keystrokes it could read, are
//     gone; its own terminal is bound at /dev/console;
//   - inside the writable caches, what runs outside later stays read-only: $PATH entries
//     (~/.cargo/bin) and ~/.cargo/env and config, so nothing planted there runs unconfined;
//   - its own /proc: other processes, and the tokens on their command lines, are invisible.
// Where they do not (or ARB_CONFINE_NO_NAMESPACES=1), confine runs with Landlock alone and says
// so once on stderr. The seccomp filter (TIOCSTI, TIOCLINUX) applies in both modes.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError, usageError } from '../errors';
import type { MountOpSpec, NamespacePlanSpec, NamespaceProbeResult, SeccompPlanSpec } from '../native';
import { checkKeepName, describeEnvironment, filterEnvironment } from './environment';
import { filtersNetwork } from './net/options';
import type { ConfinePlan, ConfineStep } from './run';

/** Landlock's network rights (ABI 4), as in landlock.ts: TCP bind and connect. */
const NET_BIND_TCP = 1n << 0n;
const NET_CONNECT_TCP = 1n << 1n;

/** The variable that forces the Landlock-only mode (for tests, and machines where it matters). */
export const NO_NAMESPACES_VARIABLE = 'ARB_CONFINE_NO_NAMESPACES';

// --- the mount plan (pure, over a view of the file system) ----------------------------------

export type EntryKind = 'directory' | 'file' | 'symlink' | 'device' | 'other';

/** The look at the file system the mount plan needs; nodeLinks is the real one. */
export interface LinkView {
  /** What is at `p` (links not followed), or undefined if nothing. */
  lstat(p: string): EntryKind | undefined;
  readlink(p: string): string | undefined;
}

export const nodeLinks: LinkView = {
  lstat(p) {
    try {
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) return 'symlink';
      if (st.isDirectory()) return 'directory';
      if (st.isCharacterDevice() || st.isBlockDevice()) return 'device';
      if (st.isFile()) return 'file';
      return 'other';
    } catch {
      return undefined;
    }
  },
  readlink(p) {
    try {
      return fs.readlinkSync(p);
    } catch {
      return undefined;
    }
  },
};

/** A link met while resolving a path: where it is (its directory resolved) and its text. */
export interface LinkStep {
  location: string;
  target: string;
}

/**
 * Resolves `p` as the kernel would, one component at a time, and returns the path with every
 * link resolved and the links met on the way (at most 40, as the kernel's ELOOP). Components
 * that do not exist are kept as they are.
 */
export function resolveWithLinks(p: string, view: LinkView): { real: string; links: LinkStep[] } {
  const links: LinkStep[] = [];
  const pending = p.split('/').filter((c) => c !== '' && c !== '.');
  let current = '/';
  let hops = 0;
  while (pending.length > 0) {
    const name = pending.shift() as string;
    if (name === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = current === '/' ? `/${name}` : `${current}/${name}`;
    if (view.lstat(next) === 'symlink' && hops < 40) {
      const target = view.readlink(next);
      if (target !== undefined) {
        hops++;
        links.push({ location: next, target });
        pending.unshift(...target.split('/').filter((c) => c !== '' && c !== '.'));
        if (target.startsWith('/')) current = '/';
        continue;
      }
    }
    current = next;
  }
  return { real: current, links };
}

/** A grant of the policy (src/confine/policy.ts), as far as the mount plan cares. */
export interface GrantLike {
  /** Absolute, links resolved. */
  path: string;
  /** list (names only) needs no mount: names are what a mask hides, and it hides them. */
  access: 'list' | 'read' | 'write';
  /** The path as named, when resolving links changed it. */
  given?: string;
}

export interface MountPlanInput {
  /** The policy's grants. */
  grants: readonly GrantLike[];
  /** The protected home directories, resolved. */
  homes: readonly string[];
  /** $XDG_RUNTIME_DIR, if set. */
  runtimeDir?: string;
  /** The command's terminal, a pseudo-terminal of the host (/dev/pts/N), if it has one. */
  terminal?: string;
  /** $PATH: its entries inside writable caches are kept read-only. */
  pathVar?: string;
  /** The directory the command works in (its own, writable whatever is on $PATH). */
  dir?: string;
  /** $TMPDIR, if set: private too (ssh-agent and emacs put their sockets there). */
  tmpdir?: string;
  /** What lies beside the fork (forkNeighbours): read-only where a writable path holds it. */
  neighbours?: readonly string[];
}

/** A step of the plan, with why it is there (and, for a read-only bind inside a writable one,
 *  that it protects what runs outside later). */
export type PlannedMount = MountOpSpec & { why: string; protect?: boolean };

export interface MountPlan {
  readOnlyRoot: boolean;
  ops: PlannedMount[];
}

/**
 * Files in writable caches that code outside runs later: rustup's installer makes ~/.profile
 * and ~/.bashrc source ~/.cargo/env, and cargo runs what ~/.cargo/config.toml names
 * (build.rustc-wrapper, runners). A command that rewrote them would run unconfined at the
 * user's next login or build. Read-only in the namespaces, with the $PATH entries in caches.
 */
export const RUN_LATER: readonly string[] = ['.cargo/env', '.cargo/env.fish', '.cargo/env.nu', '.cargo/config', '.cargo/config.toml'];

function isInside(p: string, dir: string): boolean {
  if (dir === '/') return p.startsWith('/');
  return p === dir || p.startsWith(`${dir}/`);
}

function depth(p: string): number {
  return p === '/' ? 0 : p.split('/').length - 1;
}

// At one path, the step that wins: a private tmpfs is writable already; a writable grant
// unmasks (the user asked to write there); a mask hides a merely readable one (a grant of
// reading /run, around the home directory, must not bring /run back).
const PRIORITY: Record<MountOpSpec['kind'], number> = { tmpfs: 0, devpts: 0, 'bind-rw': 1, mask: 2, 'bind-ro': 3, symlink: 4 };
const ORDER: Record<MountOpSpec['kind'], number> = { mask: 0, tmpfs: 0, devpts: 0, 'bind-ro': 1, 'bind-rw': 1, symlink: 2 };
const HIDES = new Set<MountOpSpec['kind']>(['mask', 'tmpfs', 'devpts']);

/**
 * The steps that give the command its view of the file system in its mount namespace, in the
 * order the native side runs them: parents before what is inside them.
 */
export function buildMountPlan(input: MountPlanInput, view: LinkView = nodeLinks): MountPlan {
  const candidates = new Map<string, PlannedMount>();
  const offer = (op: PlannedMount) => {
    const had = candidates.get(op.path);
    if (!had || PRIORITY[op.kind] < PRIORITY[had.kind]) candidates.set(op.path, op);
    // A $PATH entry is also a readable grant: the same bind, now one that protects.
    else if (had.kind === op.kind && op.protect) candidates.set(op.path, op);
  };
  const existingDir = (p: string | undefined): string | undefined => {
    if (!p || !path.isAbsolute(p)) return undefined;
    const { real } = resolveWithLinks(p, view);
    return view.lstat(real) === 'directory' && real !== '/' ? real : undefined;
  };

  const masks: [string | undefined, string][] = [
    ['/run', 'sockets of system services (Docker, D-Bus, systemd)'],
    ['/var/run', 'sockets of system services'],
    [input.runtimeDir, "the user's sockets ($XDG_RUNTIME_DIR: D-Bus, gpg-agent, systemd --user)"],
    ...input.homes.map((h): [string, string] => [h, 'the home directory: only the readable and writable paths in it are bound back']),
  ];
  for (const [p, why] of masks) {
    const real = existingDir(p);
    if (real) offer({ kind: 'mask', path: real, why });
  }
  const privates: [string | undefined, string][] = [
    ['/tmp', 'a private /tmp (no X11, tmux or ssh-agent sockets of the host)'],
    ['/dev/shm', 'private shared memory'],
    [input.tmpdir, 'a private $TMPDIR (ssh-agent and others put their sockets there)'],
  ];
  for (const [p, why] of privates) {
    const real = existingDir(p);
    // Not the directory the command works in, nor a part of it: that is its work, kept.
    if (real && !(input.dir && isInside(real, input.dir))) offer({ kind: 'tmpfs', path: real, why });
  }

  // The host's /dev/pts holds every terminal of the user (the command could read what is typed
  // in another one): a devpts of its own instead, and its own terminal bound at /dev/console,
  // where ttyname() finds it, as bubblewrap does.
  if (view.lstat('/dev/pts') === 'directory') {
    offer({ kind: 'devpts', path: '/dev/pts', why: 'its own pseudo-terminals only (not your other terminals)' });
    if (input.terminal && /^\/dev\/pts\/\d+$/.test(input.terminal) && view.lstat('/dev/console') === 'device') {
      offer({ kind: 'bind-rw', path: '/dev/console', source: input.terminal, why: `its terminal (${input.terminal}), where ttyname() finds it` });
    }
  }

  let readOnlyRoot = true;
  const linksOf = new Map<string, LinkStep[]>();
  for (const g of input.grants) {
    if (g.access === 'list') continue;
    if (g.access === 'write' && g.path === '/') {
      readOnlyRoot = false;
      continue;
    }
    const kind = view.lstat(g.path);
    // Devices work on a read-only mount; and /dev/ptmx bound on its own would no longer find
    // its /dev/pts, so new pseudo-terminals would fail.
    if (kind === undefined || kind === 'device') continue;
    offer({ kind: g.access === 'write' ? 'bind-rw' : 'bind-ro', path: g.path, why: g.access === 'write' ? 'writable' : 'readable' });
    if (g.given) linksOf.set(g.path, resolveWithLinks(g.given, view).links);
  }

  // What runs outside later, inside a writable cache: read-only (programs on $PATH, scripts the
  // shell sources, cargo's configuration). Not inside the directory the command works in.
  const writable = input.grants.filter((g) => g.access === 'write').map((g) => g.path);
  const protect: [string, string][] = [];
  for (const entry of (input.pathVar ?? '').split(':')) {
    if (path.isAbsolute(entry)) protect.push([entry, 'on $PATH: a program planted there would run outside']);
  }
  for (const h of input.homes) for (const rel of RUN_LATER) protect.push([path.join(h, rel), 'run outside later (your shell or cargo)']);
  // Beside the fork, unless a private tmpfs hides it already: binding it back, even read-only,
  // would bring the host's files (and sockets) back into the private /tmp.
  const privateRoots = [...candidates.values()].filter((c) => c.kind === 'tmpfs').map((c) => c.path);
  for (const p of input.neighbours ?? []) {
    if (!privateRoots.some((t) => isInside(resolveWithLinks(p, view).real, t))) {
      protect.push([p, 'beside the fork (the directory forked, a base, another fork): never written by the command']);
    }
  }
  for (const [p, why] of protect) {
    const { real } = resolveWithLinks(p, view);
    const kind = view.lstat(real);
    if (kind !== 'directory' && kind !== 'file') continue;
    if (input.dir && isInside(real, input.dir)) continue;
    if (!writable.some((w) => w !== real && isInside(real, w))) continue;
    offer({ kind: 'bind-ro', path: real, why, protect: true });
  }

  // Parents first, so each step is judged against what is above it once the redundant ones are
  // gone: a bind inside a bind of the same or more access, or a mask inside a mask, adds nothing.
  const sorted = [...candidates.values()].sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : 1));
  const kept: PlannedMount[] = [];
  const nearestAbove = (p: string) => {
    let best: MountOpSpec | undefined;
    for (const k of kept) if (k.path !== p && isInside(p, k.path) && (!best || depth(k.path) > depth(best.path))) best = k;
    return best;
  };
  for (const op of sorted) {
    const above = nearestAbove(op.path);
    const inHidden = above !== undefined && HIDES.has(above.kind);
    switch (op.kind) {
      case 'mask':
      case 'tmpfs':
      case 'devpts':
        if (!inHidden) kept.push(op);
        break;
      case 'bind-rw':
        if (op.source !== undefined || (above === undefined ? readOnlyRoot : above.kind !== 'bind-rw')) kept.push(op);
        break;
      case 'bind-ro':
        if (inHidden || (op.protect && above?.kind === 'bind-rw')) kept.push(op);
        break;
      default:
        break;
    }
  }

  // Links on the way to a granted path that live inside a mask are made again there, so that
  // ~/.gitconfig -> dotfiles/gitconfig still leads somewhere (and ~/.config -> /data, where
  // nothing needs binding, too).
  const links = new Map<string, string>();
  for (const steps of linksOf.values()) {
    for (const link of steps) {
      const above = nearestAbove(link.location);
      if (above && HIDES.has(above.kind)) links.set(link.location, link.target);
    }
  }
  for (const [location, target] of links) kept.push({ kind: 'symlink', path: location, target, why: 'a link on the way to a bound path' });

  kept.sort((a, b) => depth(a.path) - depth(b.path) || ORDER[a.kind] - ORDER[b.kind] || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { readOnlyRoot, ops: kept };
}

/**
 * What a fork has beside it that the command must never change: the directory it was forked
 * from, its base (arb diff compares the fork with it, so it is never written after the fork),
 * and the other forks of the same directory with their bases. They are usually outside every
 * writable path; but a project in /var/tmp, ~/.cache, $TMPDIR or a -w path has them all in a
 * writable one, where the namespaces (and bwrap) bind them back read-only, and Landlock alone
 * can only warn.
 */
export function forkNeighbours(fork: { source: string; fork: string; base: string }, readdir: (dir: string) => string[] | undefined = nodeReaddir): string[] {
  const parent = path.dirname(fork.fork);
  const name = path.basename(fork.source);
  const out = new Set<string>([fork.source, fork.base]);
  for (const entry of readdir(parent) ?? []) {
    const sibling = entry.startsWith(`${name}.`) || (entry.startsWith(`.${name}.`) && entry.endsWith('.base'));
    if (sibling) out.add(path.join(parent, entry));
  }
  out.delete(fork.fork);
  return [...out].sort();
}

function nodeReaddir(dir: string): string[] | undefined {
  try {
    return fs.readdirSync(dir);
  } catch {
    return undefined;
  }
}

/** The writable grant that holds one of the fork's neighbours, if any (for Landlock alone). */
export function writableOver(neighbours: readonly string[], grants: readonly GrantLike[], dir?: string): string | undefined {
  for (const n of neighbours) {
    if (dir && isInside(n, dir)) continue;
    const g = grants.find((w) => w.access === 'write' && w.path !== dir && isInside(n, w.path));
    if (g) return g.path;
  }
  return undefined;
}

// --- the layers ---------------------------------------------------------------------------

export interface Probes {
  /** Whether the plan's namespaces can be made here (namespacesProbe in src/native.ts). */
  namespaces(plan: NamespacePlanSpec): NamespaceProbeResult;
  /** Whether seccomp filters work here. */
  seccomp(): boolean;
}

function nativeProbes(): Probes {
  // Loaded here so that the pure parts of this module load without the addon (unit tests).
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const native = require('../native') as typeof import('../native');
  return { namespaces: (plan) => native.namespacesProbe(plan), seccomp: () => native.seccompAvailable() };
}

const probeCache = new Map<string, NamespaceProbeResult>();
let seccompCache: boolean | undefined;

/**
 * The probe plan: each kind of step confine takes (private tmpfs, a mask inside it, a read-only
 * bind, a link), on paths every system has, plus the PID namespace's /proc. A machine where
 * unshare works but mounting does not (an LSM that strips the new namespace's capabilities)
 * fails here, not in the middle of a run.
 */
export function probePlan(net: boolean, uid: number, gid: number): NamespacePlanSpec {
  return {
    pid: true,
    net,
    uid,
    gid,
    readOnlyRoot: true,
    mounts: [
      { kind: 'tmpfs', path: '/tmp' },
      { kind: 'mask', path: '/tmp/mask' },
      { kind: 'bind-ro', path: '/etc' },
      { kind: 'symlink', path: '/tmp/link', target: '/etc' },
    ],
  };
}

export interface HardeningInput {
  grants: readonly GrantLike[];
  homes: readonly string[];
  /** The command's environment as confine sees it (XDG_RUNTIME_DIR, ARB_CONFINE_NO_NAMESPACES). */
  env: NodeJS.ProcessEnv;
  /** --no-network, or --allow-host (whose proxy is then the only way out). */
  noNetwork: boolean;
  /** Which option asked for it, for messages (default --no-network). */
  networkOption?: string;
  /** Landlock alone, asked for by an option (the variable does the same). */
  landlockOnly?: boolean;
  /** The Landlock ABI the kernel offers. */
  abi: number;
  uid: number;
  gid: number;
  /** The command's terminal (/dev/pts/N), if its standard streams are one. */
  terminal?: string;
  /** The directory the command works in. */
  dir?: string;
  /** Beside the fork confine made (forkNeighbours): kept from the command's writes. */
  neighbours?: readonly string[];
}

export interface Layer {
  name: string;
  enforced: boolean;
  detail: string;
}

export interface Hardening {
  mode: 'namespaces' | 'landlock-only';
  /** For LandlockSpec.namespaces (undefined in the Landlock-only mode). */
  namespaces?: NamespacePlanSpec;
  /** For LandlockSpec.seccomp (undefined where seccomp does not work). */
  seccomp?: SeccompPlanSpec;
  /** Landlock network rights to handle with no port granted (TCP denied), or 0n. */
  landlockNet: bigint;
  /** The mount plan with why each step is there (for -v and --explain). */
  mounts: MountPlan;
  /** Said once on stderr. */
  warnings: string[];
  /** Said with -v. */
  details: string[];
  /** What each layer does here (for --explain). */
  layers: Layer[];
  /** How the network is reachable, one phrase (for --explain). */
  network: string;
}

function probeText(r: NamespaceProbeResult): string {
  return `${r.syscall ?? 'unshare'}${r.path ? ` ${r.path}` : ''}: ${r.code ?? 'failed'}`;
}

/** Whether the Landlock-only mode was asked for, and by what. */
export function landlockOnlyRequested(input: Pick<HardeningInput, 'env' | 'landlockOnly'>): string | undefined {
  if (input.landlockOnly) return '--landlock-only';
  const v = input.env[NO_NAMESPACES_VARIABLE];
  if (v !== undefined && v !== '' && v !== '0') return `${NO_NAMESPACES_VARIABLE}=${v}`;
  return undefined;
}

/**
 * Decides the layers for one run. Probes (once per process) whether namespaces and seccomp work.
 * Throws when --no-network cannot be honoured at all.
 */
export function planHardening(input: HardeningInput, probes?: Probes): Hardening {
  const p = probes ?? nativeProbes();
  const warnings: string[] = [];
  const details: string[] = [];
  const layers: Layer[] = [];

  const mounts = buildMountPlan({
    grants: input.grants,
    homes: input.homes,
    runtimeDir: input.env.XDG_RUNTIME_DIR,
    terminal: input.terminal,
    pathVar: input.env.PATH,
    dir: input.dir,
    tmpdir: input.env.TMPDIR,
    neighbours: input.neighbours,
  });

  // Namespaces: asked off, or probed.
  const forcedOff = landlockOnlyRequested(input);
  let why: string | undefined;
  if (forcedOff) {
    why = `turned off by ${forcedOff}`;
  } else {
    const key = `${input.noNetwork}:${input.uid}:${input.gid}`;
    let result = probeCache.get(key);
    if (!result) {
      result = p.namespaces(probePlan(input.noNetwork, input.uid, input.gid));
      probeCache.set(key, result);
    }
    if (!result.ok) why = `user namespaces do not work here (${probeText(result)})`;
  }
  const namespaces: NamespacePlanSpec | undefined = why
    ? undefined
    : { pid: true, net: input.noNetwork, uid: input.uid, gid: input.gid, readOnlyRoot: mounts.readOnlyRoot, mounts: mounts.ops.map(({ why: _why, protect: _protect, ...op }) => op) };

  if (seccompCache === undefined) seccompCache = p.seccomp();
  const seccompWorks = seccompCache;

  let landlockNet = 0n;
  let denyNetwork = false;
  let network = 'open (as the user: any host, any port)';
  if (input.noNetwork) {
    if (namespaces) {
      network = 'loopback only (a network namespace of its own)';
      details.push('network: a network namespace with only loopback');
    } else {
      const tcp = input.abi >= 4;
      if (tcp) landlockNet = NET_BIND_TCP | NET_CONNECT_TCP;
      denyNetwork = seccompWorks;
      if (!tcp && !seccompWorks) {
        throw new ArbError('ARB_UNSUPPORTED', `${input.networkOption ?? '--no-network'} cannot be enforced here: ${why}, Landlock ABI ${input.abi} has no TCP rules (ABI 4, Linux 6.7) and seccomp filters do not work`, {
          hint: `run without ${input.networkOption ?? '--no-network'}, or on a kernel with user namespaces or Landlock ABI 4`,
        });
      }
      const closed = [tcp ? 'TCP (Landlock)' : undefined, seccompWorks ? 'every socket but unix sockets (seccomp)' : undefined].filter(Boolean).join(' and ');
      const open = [
        tcp ? undefined : 'TCP',
        seccompWorks ? undefined : 'UDP and ICMP',
        input.abi >= 9 ? undefined : 'unix sockets outside (D-Bus, Docker, ssh-agent), which can reach the network for it',
      ].filter(Boolean);
      network = `closed: ${closed}${open.length ? `; still open: ${open.join(', ')}` : ''}`;
      if (!input.networkOption) warnings.push(`--no-network without a network namespace (${why}): ${network}`);
    }
  }

  const seccomp: SeccompPlanSpec | undefined = seccompWorks ? { denyTerminalInjection: true, denyNetwork } : undefined;
  if (!seccompWorks) warnings.push('seccomp filters do not work here: the command can type into your terminal with TIOCSTI where the kernel allows it (dev.tty.legacy_tiocsti)');

  if (namespaces) {
    details.push('namespaces: user, mount, IPC, PID' + (namespaces.net ? ', network' : ''));
    details.push(mounts.readOnlyRoot ? 'mounts: everything read-only but the writable paths' : 'mounts: / is writable (given with -w)');
    for (const op of mounts.ops) details.push(`mounts: ${op.kind} ${op.path}${op.target !== undefined ? ` -> ${op.target}` : ''}: ${op.why}`);
  } else {
    const lost = 'unix sockets in /run, /tmp and $XDG_RUNTIME_DIR stay reachable (ssh-agent, D-Bus, Docker), files outside can be re-permissioned (chmod, chown, touch), and other processes and their command lines are visible';
    warnings.push(`Landlock alone: ${why}, so ${lost}`);
    // Landlock cannot take away, inside a writable grant, what the grant gives.
    const over = writableOver(input.neighbours ?? [], input.grants, input.dir);
    if (over !== undefined) {
      warnings.push(`the fork is inside ${over}, which the command may write: with Landlock alone it can also change the directory it was forked from, its base and the other forks there (fork a directory outside ${over}, or let the namespaces run)`);
    }
  }
  if (seccomp) details.push(`seccomp: ioctl TIOCSTI and TIOCLINUX denied${seccomp.denyNetwork ? '; sockets other than unix sockets denied' : ''}`);

  layers.push({
    name: 'namespaces',
    enforced: namespaces !== undefined,
    detail: namespaces
      ? `user, mount, IPC, PID${namespaces.net ? ', network' : ''}: / read-only but the writable paths; /run, $XDG_RUNTIME_DIR and the home directory masked; private /tmp and /dev/shm; own /proc`
      : (why as string),
  });
  layers.push({
    name: 'seccomp',
    enforced: seccompWorks,
    detail: seccompWorks ? `ioctl TIOCSTI and TIOCLINUX denied${denyNetwork ? '; sockets other than unix sockets denied' : ''}` : 'seccomp filters do not work here',
  });

  return { mode: namespaces ? 'namespaces' : 'landlock-only', namespaces, seccomp, landlockNet, mounts, warnings, details, layers, network };
}

/** Forgets the probes (tests). */
export function resetProbes(): void {
  probeCache.clear();
  seccompCache = undefined;
}

// --- confine's steps (src/confine/run.ts STEPS) -------------------------------------------

function listFlag(v: unknown): string[] {
  if (v === undefined || v === null || v === false) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/**
 * After 'environment', before 'command': variables that look secret leave the command's
 * environment, but those named with -e NAME and those a preset keeps (plan.keepEnv). -v says
 * which went.
 */
export const environmentScrubStep: ConfineStep = (plan) => {
  const given = listFlag(plan.options.flags['keep-env']);
  for (const name of given) {
    const bad = checkKeepName(name);
    if (bad) throw usageError(bad);
  }
  const result = filterEnvironment(plan.env, [...given, ...plan.keepEnv]);
  plan.env = result.env;
  plan.notes.push(...describeEnvironment(result));
};

/** Whether the Landlock jail runs the command (the bwrap jail and `none` make their own). */
function landlockJail(plan: ConfinePlan): boolean {
  const jail = plan.options.flags.jail;
  return plan.runner === undefined && (jail === undefined || jail === 'landlock');
}

/** The hardening step's inputs from a plan (also used by --explain). */
export function hardeningInput(plan: ConfinePlan): HardeningInput {
  if (!plan.policy) throw new ArbError('ARB_INTERNAL', 'the hardening step needs the policy step first');
  return {
    grants: plan.policy.grants,
    homes: plan.homes,
    env: plan.options.env,
    noNetwork: Boolean(plan.options.flags['no-network']) || filtersNetwork(plan.options.flags),
    networkOption: filtersNetwork(plan.options.flags) ? '--allow-host' : undefined,
    landlockOnly: Boolean(plan.options.flags['landlock-only']),
    abi: plan.abi,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    terminal: ownTerminal(),
    dir: plan.dir,
    neighbours: plan.fork ? forkNeighbours(plan.fork) : undefined,
  };
}

/**
 * The pseudo-terminal confine's standard streams are, as /dev/pts/N, if any. A name under
 * /dev/pts is a terminal, so no isatty() is needed (node:tty would load net and streams at every
 * start).
 */
export function ownTerminal(): string | undefined {
  for (const fd of [0, 1, 2]) {
    try {
      const link = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (/^\/dev\/pts\/\d+$/.test(link)) return link;
    } catch {
      /* no /proc: no terminal to bind */
    }
  }
  return undefined;
}

const decided = new WeakMap<ConfinePlan, Hardening>();

/** What the hardening step decided for a plan (for --explain); undefined for other jails. */
export function hardeningOf(plan: ConfinePlan): Hardening | undefined {
  return decided.get(plan);
}

/**
 * After 'policy', before 'ruleset' (which reads plan.denyNetwork): namespaces, seccomp and
 * --no-network. Landlock-only is said once on stderr; the details go to -v.
 */
export const hardeningStep: ConfineStep = (plan) => {
  if (!landlockJail(plan)) {
    if (plan.options.flags['no-network']) throw usageError(`--no-network needs the landlock jail (given: --jail ${String(plan.options.flags.jail)})`);
    return;
  }
  const h = planHardening(hardeningInput(plan));
  decided.set(plan, h);
  plan.namespaces = h.namespaces;
  plan.seccomp = h.seccomp;
  if (h.landlockNet !== 0n) plan.denyNetwork = true;
  plan.warnings.push(...h.warnings);
  plan.notes.push(...h.details);
};
