// The bwrap jail: the command runs under bubblewrap in new namespaces (all but the network),
// seeing the host read-only, the directory read-write, private /dev, /proc, /tmp, /run masked,
// and the home directory masked by an empty file system into which the readable and writable
// paths of the policy (src/confine/policy.ts, the same lists Landlock grants) are bound back, so
// the same secrets stay hidden. `--mount` specs (src/confine/mounts.ts) come last, in order.
//
// bwrapArgs is pure and builds the whole argument list from facts gathered beforehand
// (gatherBwrapFacts); runBwrap spawns bwrap and waits for it.
//
// Why `/` is not simply `--ro-bind / /`: bwrap makes each mount point it needs, and under a
// read-only `/` it cannot, so `--mount rw:SRC:/data` would fail for a /data that the host lacks.
// Instead the jail's root stays bwrap's own tmpfs, each entry of the host's `/` is bound on it
// read-only (links remade as links), every mount is applied, and only then is the root remounted
// read-only. Writing anywhere under `/` but the granted paths still fails with EROFS. An entry
// made in the host's `/` after the command starts is not seen.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ArbError } from '../errors';
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
  /** The directory the command runs in, read-write (absolute). */
  dir: string;
  /** The home directory, masked by an empty file system. */
  home: string;
  /** Paths the command may read (the policy's), bound back read-only where they are masked. */
  readable: readonly string[];
  /** Paths the command may write (the policy's), bound read-write. */
  writable: readonly string[];
  /** The entries of the host's `/` (gatherBwrapFacts). */
  root: readonly RootEntry[];
  /** `--mount` specs, applied after everything else in this order. */
  mounts?: readonly MountSpec[];
  /** The program (absolute, resolved beforehand so that 126/127 are known) and its arguments. */
  file: string;
  args: readonly string[];
  /** $XDG_RUNTIME_DIR when it is under /run: remade empty and private, so tools find it. */
  runtimeDir?: string;
  /** Files under /run that must stay, e.g. the target of /etc/resolv.conf (for DNS). */
  keepUnderRun?: readonly string[];
  /** Variables set in the jail on top of the environment bwrap is given. */
  setenv?: Readonly<Record<string, string>>;
  /** A descriptor bwrap writes its JSON status to (child-pid, exit-code). */
  statusFd?: number;
}

// Directories the jail replaces rather than binds from the host.
const PRIVATE_DEV = '/dev';
const PRIVATE_PROC = '/proc';
const PRIVATE_TMP = '/tmp';
const MASKED_RUN = '/run';

/** True if p is base or below it. Both absolute and normalized. */
export function isUnder(p: string, base: string): boolean {
  if (base === '/') return true;
  return p === base || p.startsWith(`${base}/`);
}

function depth(p: string): number {
  return p === '/' ? 0 : p.split('/').length - 1;
}

function normal(p: string): string {
  const n = path.posix.normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

interface Bind {
  path: string;
  write: boolean;
}

/**
 * Which policy paths must be bound, and how, in the order bwrap must apply them: a path only
 * readable needs binding only where the jail hides the host (home, /tmp, /run); a writable one
 * always (the host is read-only). Any path inside a writable one is left to it: Landlock grants
 * the union too, and binding it again would follow, at set-up, a link the command could have put
 * there in an earlier run (e.g. ~/.cache/x -> ~/.ssh). A writable path inside a readable one is
 * bound after it, since a parent must be mounted before its children. /dev, /proc and /tmp
 * themselves are the jail's own.
 */
export function policyBinds(plan: Pick<BwrapPlan, 'dir' | 'home' | 'readable' | 'writable'>): Bind[] {
  const masked = [plan.home, PRIVATE_TMP, MASKED_RUN];
  const byPath = new Map<string, boolean>();
  const add = (raw: string, write: boolean) => {
    if (!path.posix.isAbsolute(raw)) return;
    const p = normal(raw);
    if (p === '/' || p === PRIVATE_TMP || isUnder(p, PRIVATE_DEV) || isUnder(p, PRIVATE_PROC)) return;
    if (!write && !masked.some((m) => isUnder(p, m))) return;
    byPath.set(p, (byPath.get(p) ?? false) || write);
  };
  for (const p of plan.readable) add(p, false);
  for (const p of plan.writable) add(p, true);
  add(plan.dir, true);
  const writable = [...byPath].filter(([, w]) => w).map(([p]) => p);
  const binds = [...byPath]
    .filter(([p]) => !writable.some((q) => q !== p && isUnder(p, q)))
    .map(([p, w]) => ({ path: p, write: w }));
  // Stable: parents before children, then in name order so the list is the same every time.
  return binds.sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The whole bwrap argument list (without `bwrap` itself). Pure. */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const home = normal(plan.home);
  if (!path.posix.isAbsolute(plan.home) || home === '/') {
    throw new ArbError('ARB_UNSUPPORTED', `cannot mask the home directory '${plan.home}' in the bwrap jail: it must be an absolute path other than /`, {
      hint: 'set HOME to your home directory',
    });
  }
  if (!path.posix.isAbsolute(plan.dir)) {
    throw new ArbError('ARB_INTERNAL', `the directory '${plan.dir}' given to the bwrap jail is not absolute`);
  }
  const dir = normal(plan.dir);
  const a: string[] = [];
  // Every namespace but the network's: the command keeps network access (agents call APIs) and
  // sees no other process, IPC object or host name. It dies when arb does, and runs in a new
  // session, so it cannot push input into arb's terminal (TIOCSTI).
  a.push('--unshare-all', '--share-net', '--die-with-parent', '--new-session');

  // The host's `/`, read-only, entry by entry (see the file comment).
  const own = new Set([PRIVATE_DEV, PRIVATE_PROC, PRIVATE_TMP, MASKED_RUN].map((p) => p.slice(1)));
  for (const e of [...plan.root].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) {
    if (own.has(e.name) || e.name === '' || e.name === '.' || e.name === '..' || e.name.includes('/')) continue;
    if (e.kind === 'link' && e.target !== undefined) a.push('--symlink', e.target, `/${e.name}`);
    else a.push('--ro-bind', `/${e.name}`, `/${e.name}`);
  }
  // Private /dev (null, zero, full, random, urandom, tty, pts, shm) and /proc, an empty /tmp.
  a.push('--dev', PRIVATE_DEV, '--proc', PRIVATE_PROC, '--tmpfs', PRIVATE_TMP);
  // /run holds host sockets (D-Bus, ssh and gpg agents, systemd): masked. What must stay is
  // bound back: the resolver configuration, and an empty private runtime directory.
  a.push('--tmpfs', MASKED_RUN);
  for (const p of plan.keepUnderRun ?? []) {
    if (path.posix.isAbsolute(p) && isUnder(normal(p), MASKED_RUN)) a.push('--ro-bind-try', normal(p), normal(p));
  }
  const runtimeDir = plan.runtimeDir && path.posix.isAbsolute(plan.runtimeDir) ? normal(plan.runtimeDir) : undefined;
  if (runtimeDir !== undefined && runtimeDir !== MASKED_RUN && isUnder(runtimeDir, MASKED_RUN)) {
    a.push('--perms', '0700', '--tmpfs', runtimeDir);
  }
  // The home directory: empty, with the policy's paths bound back. Paths that do not exist are
  // skipped (-try), as Landlock skips them.
  a.push('--perms', '0700', '--tmpfs', home);
  const binds = policyBinds({ ...plan, home });
  for (const b of binds) {
    a.push(b.write ? '--bind-try' : '--ro-bind-try', b.path, b.path);
  }
  // The user's mounts, after the defaults, so that one can override a default for the same
  // destination (e.g. tmpfs:/tmp for an ephemeral /tmp over a fork under /tmp).
  for (const m of plan.mounts ?? []) a.push(...mountArgs(m));
  // Only now, with every mount point made, the masks become read-only: writing in the home, /run
  // or `/` outside what is granted fails (EROFS) as it fails under Landlock (EACCES). Each
  // remount is of that file system alone, not of what is mounted on it.
  // A mask that something was later mounted on, or over, is left alone: the remount would make
  // that mount read-only instead (e.g. -d ~, or --mount rw:/x:/run).
  const later = [...binds.map((b) => b.path), ...(plan.mounts ?? []).map((m) => m.dest)];
  for (const mask of [MASKED_RUN, home, '/']) {
    if (!later.some((d) => isUnder(mask, d))) a.push('--remount-ro', mask);
  }

  a.push('--chdir', dir);
  for (const [k, v] of Object.entries(plan.setenv ?? {})) a.push('--setenv', k, v);
  if (plan.statusFd !== undefined) a.push('--json-status-fd', String(plan.statusFd));
  a.push('--', plan.file, ...plan.args);
  return a;
}

/**
 * Whether the jail shows a host path (read-only at least): it does unless the path is in the
 * masked home, /tmp or /run and no bind brings it back. Used to refuse, with a hint, a command
 * that exists outside but that the jail hides (e.g. ~/scripts/tool).
 */
export function visibleInJail(p: string, plan: Pick<BwrapPlan, 'dir' | 'home' | 'readable' | 'writable' | 'mounts' | 'keepUnderRun'>): boolean {
  const file = normal(p);
  const home = normal(plan.home);
  const masked = [home, PRIVATE_TMP, MASKED_RUN].filter((m) => isUnder(file, m));
  if (masked.length === 0) return true;
  const shown = [
    ...policyBinds({ ...plan, home }).map((b) => b.path),
    ...(plan.keepUnderRun ?? []).map(normal),
    ...(plan.mounts ?? []).filter((m) => m.source !== undefined && m.source === m.dest).map((m) => m.dest),
  ];
  return shown.some((s) => isUnder(file, s));
}

// --- facts and running: the only parts that touch the system ------------------------------

/**
 * Finds the bwrap program on PATH. A missing one is an error naming the package to install,
 * never a reason to run the command without the jail.
 */
export function findBwrap(searchPath: string | undefined = process.env.PATH): string {
  const dirs = (searchPath ?? '').split(':').filter((d) => path.isAbsolute(d));
  for (const d of [...dirs, '/usr/bin', '/bin']) {
    const candidate = path.join(d, 'bwrap');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  throw new ArbError('ARB_UNSUPPORTED', "cannot use the bwrap jail: bubblewrap's program 'bwrap' is not installed (not found on PATH)", {
    hint: 'install the package bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap), or use --jail landlock',
  });
}

export interface BwrapFacts {
  root: RootEntry[];
  runtimeDir?: string;
  keepUnderRun: string[];
}

/** What bwrapArgs needs from the host: the entries of `/`, and what must survive /run's mask. */
export function gatherBwrapFacts(env: NodeJS.ProcessEnv = process.env): BwrapFacts {
  const root: RootEntry[] = [];
  for (const d of fs.readdirSync('/', { withFileTypes: true })) {
    if (d.isSymbolicLink()) {
      root.push({ name: d.name, kind: 'link', target: fs.readlinkSync(`/${d.name}`) });
    } else {
      root.push({ name: d.name, kind: 'other' });
    }
  }
  // The resolver configuration is often a link into /run (systemd-resolved, resolvconf): DNS
  // must keep working with /run masked. Only its target is brought back, read-only.
  const keepUnderRun: string[] = [];
  for (const f of ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf']) {
    try {
      const real = fs.realpathSync(f);
      if (isUnder(real, MASKED_RUN)) keepUnderRun.push(real);
    } catch {
      /* absent or dangling: nothing to keep */
    }
  }
  const runtimeDir = env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : undefined;
  return { root, runtimeDir, keepUnderRun };
}

export interface RunBwrapOptions {
  /** bwrap's own environment, which the command inherits (already filtered of secrets). */
  env: NodeJS.ProcessEnv;
  /** Called with bwrap's pid once it is spawned (e.g. to remove a fork afterwards). */
  onSpawn?: (pid: number) => void;
}

/** The fd bwrap writes its status to: the first after stdin, stdout and stderr. */
export const STATUS_FD = 3;

/**
 * Runs bwrap with args (built with statusFd: STATUS_FD) and resolves with the command's exit
 * status (128+N for a signal N). bwrap reports the command's exit on its status descriptor; if
 * it exits without that report it failed to set up the jail or to start the command, and has
 * said why on stderr: that is an error, not the command's status.
 */
export function runBwrap(bwrap: string, args: readonly string[], options: RunBwrapOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(bwrap, args, { stdio: ['inherit', 'inherit', 'inherit', 'pipe'], env: options.env });
    let status = '';
    child.stdio[STATUS_FD]?.on('data', (chunk: Buffer) => {
      status += chunk.toString('utf8');
    });
    // The terminal's ^C and ^\ reach bwrap too (same process group), which ends the jail; arb
    // outlives them to report the status. Other signals sent to arb alone are passed on.
    const ignore = () => {};
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const handlers: [NodeJS.Signals, () => void][] = [
      ['SIGINT', ignore],
      ['SIGQUIT', ignore],
      ['SIGTERM', forward('SIGTERM')],
      ['SIGHUP', forward('SIGHUP')],
    ];
    for (const [sig, h] of handlers) process.on(sig, h);
    const done = () => {
      for (const [sig, h] of handlers) process.removeListener(sig, h);
    };
    child.on('spawn', () => options.onSpawn?.(child.pid as number));
    child.on('error', (err) => {
      done();
      reject(new ArbError('ARB_IO', `cannot run '${bwrap}': ${err.message}`, { cause: err }));
    });
    child.on('close', (code, signal) => {
      done();
      const exit = exitCodeFromStatus(status);
      if (exit !== undefined) return resolve(exit);
      if (signal) return resolve(128 + (osSignalNumber(signal) ?? 0));
      reject(
        new ArbError('ARB_UNSUPPORTED', `bubblewrap could not set up the jail or start the command (exit ${code}; its message is above)`, {
          exitCode: code === 0 || code === null ? 1 : code,
          hint: 'if it says user namespaces are not permitted, allow them (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor profile for bwrap on Ubuntu) or use --jail landlock',
        }),
      );
    });
  });
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

function osSignalNumber(signal: NodeJS.Signals): number | undefined {
  return os.constants.signals[signal];
}
