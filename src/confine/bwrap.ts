// The bwrap jail: the command runs under bubblewrap in new namespaces (all but the network),
// seeing the host read-only, the directory read-write, private /dev, /proc, /tmp, /run masked,
// and the home directory masked by an empty file system into which the readable and writable
// paths of the policy (src/confine/policy.ts, the same lists Landlock grants) are bound back, so
// the same secrets stay hidden. `--mount` specs (src/confine/mounts.ts) come last, in order.
//
// bwrapArgs is pure and builds the whole argument list from facts gathered beforehand
// (gatherBwrapFacts); bwrapStep puts it in confine's plan with a runner that spawns bwrap and
// waits for it (a jail in namespaces cannot be entered by execve from Node).
//
// Why `/` is not simply `--ro-bind / /`: bwrap makes each mount point it needs, and under a
// read-only `/` it cannot, so `--mount rw:SRC:/data` would fail for a /data that the host lacks.
// Instead the jail's root stays bwrap's own tmpfs, each entry of the host's `/` is bound on it
// read-only (links remade as links), every mount is applied, and only then is the root remounted
// read-only. Writing anywhere under `/` but the granted paths still fails with EROFS. An entry
// made in the host's `/` after the command starts is not seen.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError } from '../errors';
import { LinkView, RUN_LATER, forkNeighbours, nodeLinks, resolveWithLinks } from './hardening';
import { runAndWait } from './jail';
import { MountSpec, checkMountSources, mountArgs } from './mounts';
import { filtersNetwork } from './net/options';
import type { Grant } from './policy';
import type { ConfinePlan, ConfineStep } from './run';

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
  /** The home directories (the user's and $HOME), each masked by an empty file system. */
  homes: readonly string[];
  /** Paths the command may read (the policy's), bound back read-only where they are masked. */
  readable: readonly string[];
  /** Paths the command may write (the policy's), bound read-write. */
  writable: readonly string[];
  /** Inside writable paths, what runs outside later ($PATH entries, ~/.cargo/env): bound back
   *  read-only, as the Landlock jail's namespaces do (protectedPaths). */
  protect?: readonly string[];
  /** Links on the way to a bound path that lie in a mask, remade there (~/.gitconfig -> dotfiles/gitconfig). */
  links?: readonly { location: string; target: string }[];
  /** The entries of the host's `/` (gatherBwrapFacts). */
  root: readonly RootEntry[];
  /** `--mount` specs, applied after everything else in this order. */
  mounts?: readonly MountSpec[];
  /** The program (absolute, resolved beforehand so that 126/127 are known) and its arguments. */
  file: string;
  args: readonly string[];
  /** $XDG_RUNTIME_DIR (links resolved): remade empty and private, so tools find it. */
  runtimeDir?: string;
  /** Files under /run that must stay, e.g. the target of /etc/resolv.conf (for DNS). */
  keepUnderRun?: readonly string[];
  /** Variables set in the jail on top of the environment bwrap is given. */
  setenv?: Readonly<Record<string, string>>;
  /** A descriptor bwrap writes its JSON status to (child-pid, exit-code). */
  statusFd?: number;
  /** --allow-host: a network namespace of its own (loopback only; confine's proxy listens in
   *  it), and the descriptor bwrap waits on before it runs the command, until the listener is
   *  there (--block-fd). */
  proxyNet?: boolean;
  blockFd?: number;
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
 * readable is bound only inside a home directory (elsewhere the host shows through read-only; and
 * /run and /tmp are the jail's own: the policy's grants of reading around the home directory,
 * /run and /tmp among them, must not bring the host's back); a writable one always (the host is
 * read-only). Any path inside a writable one is left to it: Landlock grants
 * the union too, and binding it again would follow, at set-up, a link the command could have put
 * there in an earlier run (e.g. ~/.cache/x -> ~/.ssh). A writable path inside a readable one is
 * bound after it, since a parent must be mounted before its children. /dev, /proc and /tmp
 * themselves are the jail's own.
 */
export function policyBinds(plan: Pick<BwrapPlan, 'dir' | 'homes' | 'readable' | 'writable' | 'protect'>): Bind[] {
  const homes = plan.homes.map(normal);
  const byPath = new Map<string, boolean>();
  const add = (raw: string, write: boolean) => {
    if (!path.posix.isAbsolute(raw)) return;
    const p = normal(raw);
    if (p === '/' || p === PRIVATE_TMP || isUnder(p, PRIVATE_DEV) || isUnder(p, PRIVATE_PROC)) return;
    if (!write && !homes.some((h) => p !== h && isUnder(p, h))) return;
    byPath.set(p, (byPath.get(p) ?? false) || write);
  };
  for (const p of plan.readable) add(p, false);
  for (const p of plan.writable) add(p, true);
  add(plan.dir, true);
  const writable = [...byPath].filter(([, w]) => w).map(([p]) => p);
  const binds = [...byPath]
    .filter(([p]) => !writable.some((q) => q !== p && isUnder(p, q)))
    .map(([p, w]) => ({ path: p, write: w }));
  // The exception: what runs outside later, read-only inside a writable cache. protectedPaths
  // checked that each is really there (links resolved), so no planted link is followed.
  for (const raw of plan.protect ?? []) {
    if (!path.posix.isAbsolute(raw)) continue;
    const p = normal(raw);
    if (byPath.get(p) === true || binds.some((b) => b.path === p)) continue;
    if (writable.some((q) => q !== p && isUnder(p, q))) binds.push({ path: p, write: false });
  }
  // Stable: parents before children, then in name order so the list is the same every time.
  return binds.sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
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
  // A home inside another is masked with it.
  const all = [...new Set(plan.homes.map(normal))];
  const homes = all.filter((h) => !all.some((o) => o !== h && isUnder(h, o))).sort();
  if (!path.posix.isAbsolute(plan.dir)) {
    throw new ArbError('ARB_INTERNAL', `the directory '${plan.dir}' given to the bwrap jail is not absolute`);
  }
  const dir = normal(plan.dir);
  const a: string[] = [];
  // Every namespace but the network's: the command keeps network access (agents call APIs) and
  // sees no other process, IPC object or host name. It dies when arb does, and runs in a new
  // session, so it cannot push input into arb's terminal (TIOCSTI).
  // With --allow-host the network's too: only loopback, where confine's proxy listens.
  a.push('--unshare-all', ...(plan.proxyNet ? [] : ['--share-net']), '--die-with-parent', '--new-session');

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
  // The home directory: empty, with the policy's paths bound back. Paths that do not exist are
  // skipped (-try), as Landlock skips them.
  for (const home of homes) a.push('--perms', '0700', '--tmpfs', home);
  // $XDG_RUNTIME_DIR (D-Bus, gpg-agent, systemd --user sockets): an empty private one instead,
  // since tools expect it to exist.
  const runtimeDir = plan.runtimeDir && path.posix.isAbsolute(plan.runtimeDir) ? normal(plan.runtimeDir) : undefined;
  if (runtimeDir !== undefined && runtimeDir !== '/' && runtimeDir !== MASKED_RUN && !homes.includes(runtimeDir)) {
    a.push('--perms', '0700', '--tmpfs', runtimeDir);
  }
  const binds = policyBinds({ ...plan, homes });
  for (const b of binds) {
    a.push(b.write ? '--bind-try' : '--ro-bind-try', b.path, b.path);
  }
  // Links that lead to a bound path from inside a mask, so the path still works by its name.
  const masks = [...homes, PRIVATE_TMP, MASKED_RUN];
  const links = (plan.links ?? [])
    .map((l) => ({ location: normal(l.location), target: l.target }))
    .filter((l) => masks.some((m) => l.location !== m && isUnder(l.location, m)) && !binds.some((b) => isUnder(l.location, b.path)))
    .sort((x, y) => depth(x.location) - depth(y.location) || (x.location < y.location ? -1 : 1));
  for (const l of links) a.push('--symlink', l.target, l.location);
  // The user's mounts, after the defaults, so that one can override a default for the same
  // destination (e.g. tmpfs:/tmp for an ephemeral /tmp over a fork under /tmp).
  for (const m of plan.mounts ?? []) a.push(...mountArgs(m));
  // Only now, with every mount point made, the masks become read-only: writing in the home, /run
  // or `/` outside what is granted fails (EROFS) as it fails under Landlock (EACCES). Each
  // remount is of that file system alone, not of what is mounted on it.
  // A mask that something was later mounted on, or over, is left alone: the remount would make
  // that mount read-only instead (e.g. -d ~, or --mount rw:/x:/run).
  const later = [...binds.map((b) => b.path), ...(plan.mounts ?? []).map((m) => m.dest)];
  for (const mask of [MASKED_RUN, ...homes, '/']) {
    if (!later.some((d) => isUnder(mask, d))) a.push('--remount-ro', mask);
  }

  a.push('--chdir', dir);
  for (const [k, v] of Object.entries(plan.setenv ?? {})) a.push('--setenv', k, v);
  if (plan.statusFd !== undefined) a.push('--json-status-fd', String(plan.statusFd));
  if (plan.blockFd !== undefined) a.push('--block-fd', String(plan.blockFd));
  a.push('--', plan.file, ...plan.args);
  return a;
}

/**
 * Whether the jail shows a host path (read-only at least): it does unless the path is in the
 * masked home, /tmp or /run and no bind brings it back. Used to refuse, with a hint, a command
 * that exists outside but that the jail hides (e.g. ~/scripts/tool).
 */
export function visibleInJail(p: string, plan: Pick<BwrapPlan, 'dir' | 'homes' | 'readable' | 'writable' | 'mounts' | 'keepUnderRun'>): boolean {
  const file = normal(p);
  const masked = [...plan.homes.map(normal), PRIVATE_TMP, MASKED_RUN].filter((m) => isUnder(file, m));
  if (masked.length === 0) return true;
  const shown = [
    ...policyBinds(plan).map((b) => b.path),
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
export function findBwrap(searchPath: string | undefined = process.env.PATH, fallbacks: readonly string[] = ['/usr/bin', '/bin']): string {
  const dirs = (searchPath ?? '').split(':').filter((d) => path.isAbsolute(d));
  for (const d of [...dirs, ...fallbacks]) {
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
  // $XDG_RUNTIME_DIR where it really is (a link such as /var/run leads into /run). One that does
  // not exist is made only under /run, which is the jail's own tmpfs.
  let runtimeDir: string | undefined;
  const given = env.XDG_RUNTIME_DIR;
  if (given && path.isAbsolute(given)) {
    try {
      runtimeDir = fs.realpathSync(given);
    } catch {
      runtimeDir = isUnder(path.normalize(given), MASKED_RUN) ? path.normalize(given) : undefined;
    }
  }
  return { root, runtimeDir, keepUnderRun };
}

/** The fd bwrap writes its status to: the first after stdin, stdout and stderr. */
export const STATUS_FD = 3;
/** With --allow-host, the fd bwrap waits on before it runs the command (--block-fd). */
export const BLOCK_FD = 4;

/** The sandbox's pid, from the first line bwrap writes on its JSON status descriptor. */
export function childPidFromStatus(status: string): number | undefined {
  const end = status.indexOf('}');
  if (end < 0) return undefined;
  try {
    const pid = (JSON.parse(status.slice(0, end + 1)) as Record<string, unknown>)['child-pid'];
    return typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

// --- confine's steps for --jail bwrap (src/confine/jail.ts puts them in the plan) -----------

/**
 * First, before anything is forked: bwrap is there, and every --mount source exists. A missing
 * bwrap is an error naming the package, never a reason to run the command without the jail.
 */
export function bwrapCheckStep(mounts: readonly MountSpec[]): ConfineStep {
  return () => {
    findBwrap(process.env.PATH);
    checkMountSources(mounts);
  };
}

/**
 * What runs outside the jail later but lies inside a writable path: $PATH entries (~/.cargo/bin)
 * and the files RUN_LATER names (~/.cargo/env, cargo's config). A command that wrote there would
 * run unconfined at the user's next login, build or command, so they are bound back read-only,
 * as the Landlock jail's namespaces do (src/confine/hardening.ts). Each is taken where it really
 * is, and only if that is inside a writable path and not in the directory the command works in.
 */
export function protectedPaths(
  input: { writable: readonly string[]; homes: readonly string[]; pathVar?: string; dir: string; neighbours?: readonly string[] },
  view: LinkView = nodeLinks,
): string[] {
  const candidates: string[] = [];
  for (const entry of (input.pathVar ?? '').split(':')) if (path.posix.isAbsolute(entry)) candidates.push(entry);
  for (const h of input.homes) for (const rel of RUN_LATER) candidates.push(path.posix.join(h, rel));
  // Beside the fork (hardening.ts forkNeighbours): the directory forked, its base, other forks.
  candidates.push(...(input.neighbours ?? []));
  const out: string[] = [];
  for (const c of candidates) {
    const { real } = resolveWithLinks(c, view);
    const kind = view.lstat(real);
    if (kind !== 'directory' && kind !== 'file') continue;
    if (isUnder(real, input.dir)) continue;
    if (!input.writable.some((w) => w !== real && isUnder(real, w))) continue;
    if (!out.includes(real)) out.push(real);
  }
  return out;
}

/** The policy's grants as bwrap's readable and writable lists, and the links to remake. */
export function grantsForBwrap(grants: readonly Grant[], view: LinkView = nodeLinks): Pick<BwrapPlan, 'readable' | 'writable' | 'links'> {
  const readable: string[] = [];
  const writable: string[] = [];
  const links: { location: string; target: string }[] = [];
  for (const g of grants) {
    if (g.access === 'list') continue; // names only: the masks hide names, and so they should
    (g.access === 'write' ? writable : readable).push(g.path);
    if (g.given) links.push(...resolveWithLinks(g.given, view).links);
  }
  return { readable, writable, links };
}

/** One argument as a shell would need it quoted, for -v. */
export function shellQuote(a: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/**
 * After 'policy' and 'hardening': the bwrap argument list from the same grants Landlock would
 * enforce, and the runner that carries it out (waiting for bwrap; the command's status is its).
 */
export function bwrapStep(mounts: readonly MountSpec[]): ConfineStep {
  return (plan: ConfinePlan) => {
    if (!plan.policy) throw new ArbError('ARB_INTERNAL', 'the bwrap step needs the policy step first');
    const bwrap = findBwrap(process.env.PATH);
    const grants = grantsForBwrap(plan.policy.grants);
    const plain: BwrapPlan = {
      dir: plan.dir,
      homes: plan.homes,
      ...grants,
      protect: protectedPaths({
        writable: grants.writable,
        homes: plan.homes,
        pathVar: plan.options.env.PATH,
        dir: plan.dir,
        neighbours: plan.fork ? forkNeighbours(plan.fork) : undefined,
      }),
      ...gatherBwrapFacts(plan.options.env),
      mounts,
      file: plan.file,
      args: plan.argv.slice(1),
      setenv: { CLAUDE_CODE_SANDBOXED: '1' },
      statusFd: STATUS_FD,
      // --allow-host (src/confine/net/step.ts serves the proxy in the namespace once it exists).
      ...(filtersNetwork(plan.options.flags) ? { proxyNet: true, blockFd: BLOCK_FD } : {}),
    };
    let real = plan.file;
    try {
      real = fs.realpathSync(plan.file);
    } catch {
      /* resolved already; keep the name */
    }
    for (const f of new Set([plan.file, real])) {
      if (!visibleInJail(f, plain)) {
        throw new ArbError('ARB_COMMAND_NOT_EXECUTABLE', `${plan.options.command}: cannot run '${f}' in the bwrap jail: it is in a directory the jail hides (the home directory, /tmp or /run)`, {
          exitCode: 126,
          hint: `give its directory with -r ${path.dirname(f)}, or --mount ro:${path.dirname(f)}`,
        });
      }
    }
    const args = bwrapArgs(plain);
    plan.waitReasons.push('the bwrap jail');
    plan.notes.push(`bwrap jail: ${[bwrap, ...args].map(shellQuote).join(' ')}`);
    plan.runner = (p) => {
      let status = '';
      return runAndWait(
        p,
        () => {
          closeInheritedDescriptors();
          const child = spawn(bwrap, args, { stdio: ['inherit', 'inherit', 'inherit', 'pipe', ...(plain.proxyNet ? ['pipe' as const] : [])], env: p.env });
          let started = !plain.proxyNet;
          child.stdio[STATUS_FD]?.on('data', (chunk: Buffer) => {
            status += chunk.toString('utf8');
            const pid = started ? undefined : childPidFromStatus(status);
            if (pid !== undefined) {
              started = true;
              void releaseWhenReady(p, pid, child);
            }
          });
          return child;
        },
        (ended) => {
          // bwrap reports the command's exit on its status descriptor; without that report it
          // failed to set up the jail or to start the command, and has said why on stderr.
          const exit = exitCodeFromStatus(status);
          if (exit !== undefined) return exit;
          if (ended.signal !== null) return 128 + ended.signal;
          const hints = [
            'if it says user namespaces are not permitted, allow them (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap on Ubuntu 24.04) or use --jail landlock',
          ];
          if (mounts.length > 0) {
            hints.push("if it cannot make a --mount destination, give one that exists, or one directly under /, /tmp or the home directory (the rest of the host is read-only)");
          }
          throw new ArbError('ARB_UNSUPPORTED', `bubblewrap could not set up the jail or start the command (bwrap exited ${ended.status}; its message is above)`, {
            exitCode: ended.status === 0 || ended.status === null ? 1 : ended.status,
            hint: hints.join('; '),
          });
        },
      );
    };
  };
}

/**
 * With --allow-host: bwrap has made the sandbox (its pid is `pid`) and waits on BLOCK_FD. The
 * plan's afterStart hooks put the proxy's listener in its network namespace; then bwrap is let
 * go. If they fail, bwrap is killed: the command never runs without its proxy.
 */
async function releaseWhenReady(plan: ConfinePlan, pid: number, child: import('node:child_process').ChildProcess): Promise<void> {
  try {
    for (const f of plan.afterStart) await f(pid);
    (child.stdio[BLOCK_FD] as import('node:stream').Writable).end('x');
  } catch (err) {
    fs.writeSync(2, `${plan.options.program}: ${(err as Error).message}; nothing was run\n`);
    child.kill('SIGKILL');
  }
}

/**
 * Closes the descriptors confine inherited (a pipe or a directory its caller left open), which
 * spawn would pass on to bwrap and bwrap to the command: only 0, 1, 2 may reach it. They are
 * told apart from Node's own by O_CLOEXEC, which libuv sets on every descriptor it opens, and
 * which /proc/self/fdinfo shows (flags, octal).
 */
export function closeInheritedDescriptors(): void {
  const ipc = Number(process.env.NODE_CHANNEL_FD ?? -1);
  let fds: string[];
  try {
    fds = fs.readdirSync('/proc/self/fd');
  } catch {
    return; // no /proc: bwrap could not run either, and says so
  }
  for (const name of fds) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2 || fd === ipc) continue;
    let info: string;
    try {
      info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      continue; // the descriptor readdir itself used, closed since
    }
    const flags = /^flags:\s+([0-7]+)/m.exec(info);
    if (flags && (parseInt(flags[1], 8) & 0o2000000) === 0) {
      try {
        fs.closeSync(fd);
      } catch {
        /* gone already */
      }
    }
  }
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

