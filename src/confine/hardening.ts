// Which layers confine puts around the command besides Landlock, decided here for both Linux
// jails: the namespaces and the mount plan inside them (src/confine/mount-plan.ts), the seccomp
// filter, and what --no-network becomes. The launcher (native/launcher/) only carries the plan
// out; under --jail bwrap, bubblewrap makes the namespaces from the same mount plan and the
// launcher, inside, applies Landlock and seccomp.
//
// Where unprivileged user namespaces work, the command runs in its own user, mount, IPC and PID
// namespaces (and network namespace with --no-network):
//   - every mount read-only, then the writable paths bound back writable: chmod, chown, utime
//     and setxattr outside them fail with EROFS, which Landlock does not cover;
//   - /run, /var/run, $XDG_RUNTIME_DIR and the home directory masked by empty read-only tmpfs,
//     with the readable and writable paths in them bound back: the unix sockets there (Docker,
//     D-Bus, ssh-agent, gpg-agent, systemd --user), which Landlock below ABI 9 lets a command
//     connect to, are gone, and so are the names of the files in the home directory;
//   - a private /tmp, /dev/shm and $TMPDIR (tmux, X11 and ssh-agent sockets gone), each with a
//     size limit, the writable paths under them bound back;
//   - a /dev/pts of its own: the user's other terminals, whose keystrokes it could read, are
//     gone; its own terminal is bound at /dev/console;
//   - inside the writable caches, what runs outside later stays read-only, whether it exists
//     yet or not (src/confine/caches.ts), so nothing planted there runs unconfined;
//   - its own /proc: other processes, and the tokens on their command lines, are invisible.
// Where they do not (or ARB_CONFINE_NO_NAMESPACES=1), confine runs with Landlock alone and says
// so once on stderr. The seccomp filter (TIOCSTI, TIOCLINUX) applies in both modes.
import * as fs from 'node:fs';
import * as os from 'node:os';

import { ArbError } from '../errors';
import type { NamespacePlanSpec, NamespaceProbeResult, SeccompPlanSpec } from '../native';
import type { RunLaterPath } from './caches';
import { GrantLike, MountPlan, buildMountPlan, launcherMounts, writableOver } from './mount-plan';

/** Landlock's network rights (ABI 4), as in landlock.ts: TCP bind and connect. */
const NET_BIND_TCP = 1n << 0n;
const NET_CONNECT_TCP = 1n << 1n;

/** The variable that forces the Landlock-only mode (for tests, and machines where it matters). */
export const NO_NAMESPACES_VARIABLE = 'ARB_CONFINE_NO_NAMESPACES';

// --- the layers ---------------------------------------------------------------------------

export interface Probes {
  /** Whether the plan's namespaces can be made here: the answer of probeNamespaces
   *  (src/confine/launch.ts) for probePlan, which startProbes started early. */
  namespaces(plan: NamespacePlanSpec): NamespaceProbeResult;
  /** Whether seccomp filters work here. */
  seccomp(): boolean;
}

/**
 * Starts the probes for one run, as soon as what they depend on is known, so that the launcher
 * tries the namespaces while confine plans (forks, makes the policy); resolves with the answers
 * planHardening takes. Nothing is probed when the namespaces are turned off.
 */
export async function startProbes(input: Pick<HardeningInput, 'env' | 'landlockOnly' | 'noNetwork' | 'uid' | 'gid'>): Promise<Probes> {
  // Loaded here so that the pure parts of this module load without the addon (unit tests).
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const native = require('../native') as typeof import('../native');
  const seccomp = native.seccompAvailable();
  let answer: NamespaceProbeResult = { ok: false, syscall: 'unshare', code: 'not probed' };
  if (!landlockOnlyRequested(input)) {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { probeNamespaces } = require('./launch') as typeof import('./launch');
    answer = await probeNamespaces(probePlan(input.noNetwork, input.uid, input.gid));
  }
  return { namespaces: () => answer, seccomp: () => seccomp };
}

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
  /** The jail: the launcher makes the namespaces (landlock), or bubblewrap does (bwrap). */
  jail?: 'landlock' | 'bwrap';
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
  /** Files under /run to keep (the resolver configuration). */
  keepUnderRun?: readonly string[];
  /** What runs later from the caches (src/confine/caches.ts). */
  runLater?: readonly RunLaterPath[];
}

/**
 * The size limit of each private tmpfs (/tmp, /dev/shm, $TMPDIR): a quarter of the memory, so a
 * command filling them (each would get half by default) cannot take all of it.
 */
export function privateTmpSize(totalMemory: number = os.totalmem()): number {
  return Math.max(64 * 1024 * 1024, Math.floor(totalMemory / 4));
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
 * Decides the layers for one run. Probes whether namespaces and seccomp work (each run asks
 * again: nothing cached decides). Throws when --no-network cannot be honoured at all.
 */
export function planHardening(input: HardeningInput, probes: Probes): Hardening {
  const p = probes;
  const bwrap = input.jail === 'bwrap';
  const warnings: string[] = [];
  const details: string[] = [];
  const layers: Layer[] = [];

  // Namespaces: bubblewrap's own under --jail bwrap (it fails, and says why, where they do not
  // work); else asked off, or probed.
  const forcedOff = bwrap ? undefined : landlockOnlyRequested(input);
  let why: string | undefined;
  if (forcedOff) {
    why = `turned off by ${forcedOff}`;
  } else if (!bwrap) {
    const result = p.namespaces(probePlan(input.noNetwork, input.uid, input.gid));
    if (!result.ok) why = `user namespaces do not work here (${probeText(result)})`;
  }
  const buildMounts = (): MountPlan =>
    buildMountPlan({
      grants: input.grants,
      homes: input.homes,
      runtimeDir: input.env.XDG_RUNTIME_DIR,
      terminal: input.terminal,
      pathVar: input.env.PATH,
      dir: input.dir,
      tmpdir: input.env.TMPDIR,
      neighbours: input.neighbours,
      keepUnderRun: input.keepUnderRun,
      tmpSize: privateTmpSize(),
      runLater: input.runLater,
    });
  // The mount plan is made only where namespaces carry it out (it looks at many paths).
  const mounts: MountPlan = why ? { readOnlyRoot: true, ops: [] } : buildMounts();
  warnings.push(...(mounts.warnings ?? []));
  const namespaces: NamespacePlanSpec | undefined = why
    ? undefined
    : { pid: true, net: input.noNetwork, uid: input.uid, gid: input.gid, readOnlyRoot: mounts.readOnlyRoot, mounts: launcherMounts(mounts) };

  const seccompWorks = p.seccomp();

  let landlockNet = 0n;
  let denyNetwork = false;
  let network = 'open (as the user: any host, any port)';
  if (input.noNetwork) {
    if (namespaces) {
      network = bwrap ? "loopback only (bubblewrap's network namespace)" : 'loopback only (a network namespace of its own)';
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
    details.push(`namespaces${bwrap ? " (bubblewrap's)" : ''}: user, mount, IPC, PID` + (namespaces.net ? ', network' : ''));
    details.push(mounts.readOnlyRoot ? 'mounts: everything read-only but the writable paths' : 'mounts: / is writable (given with -w)');
    for (const op of mounts.ops) details.push(`mounts: ${op.kind} ${op.path}${op.target !== undefined ? ` -> ${op.target}` : ''}: ${op.why}`);
  } else {
    // Below ABI 9 Landlock does not check connect(2) to a pathname socket: without the
    // namespaces' masks, every socket the user can reach outside is reachable.
    const sockets = input.abi < 9 ? 'unix sockets anywhere stay reachable (ssh-agent, D-Bus and Docker in /run, /tmp and $XDG_RUNTIME_DIR, gpg-agent in the home directory), ' : '';
    const lost = sockets + 'files outside can be re-permissioned (chmod, chown, touch), other processes and their command lines are visible, what runs later from the caches (~/.cargo/bin, ~/.cargo/config, ~/.rustup/toolchains, …) stays writable, and what the command leaves running outlives it unless confine waits for it (--rm)';
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
