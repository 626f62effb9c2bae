// Landlock, decided here: which rights each ABI knows, what a grant of the policy becomes, and
// what a kernel without (enough) Landlock means. Nothing here touches the kernel but
// readLandlockAbi; the ruleset is applied by the launcher (native/launcher/landlock.cc).
//
// The rights are spelled out from the kernel's UAPI (include/uapi/linux/landlock.h) rather than
// taken from the system's headers, which lag the running kernel (Debian 12's stop at ABI 2).
import { ArbError } from '../errors';
import type { Grant } from './policy';

/** File-system rights (handled_access_fs / allowed_access). */
export const FS = {
  EXECUTE: 1n << 0n,
  WRITE_FILE: 1n << 1n,
  READ_FILE: 1n << 2n,
  READ_DIR: 1n << 3n,
  REMOVE_DIR: 1n << 4n,
  REMOVE_FILE: 1n << 5n,
  MAKE_CHAR: 1n << 6n,
  MAKE_DIR: 1n << 7n,
  MAKE_REG: 1n << 8n,
  MAKE_SOCK: 1n << 9n,
  MAKE_FIFO: 1n << 10n,
  MAKE_BLOCK: 1n << 11n,
  MAKE_SYM: 1n << 12n,
  /** ABI 2: rename and link across directories. */
  REFER: 1n << 13n,
  /** ABI 3: truncate(2), O_TRUNC. */
  TRUNCATE: 1n << 14n,
  /** ABI 5: ioctl(2) on character and block devices. */
  IOCTL_DEV: 1n << 15n,
  /** ABI 9: connect(2)/sendmsg(2) to a pathname unix socket. */
  RESOLVE_UNIX: 1n << 16n,
} as const;

/** Network rights (ABI 4). */
export const NET = {
  BIND_TCP: 1n << 0n,
  CONNECT_TCP: 1n << 1n,
} as const;

/** Scopes (ABI 6): IPC with processes outside the domain. */
export const SCOPE = {
  ABSTRACT_UNIX_SOCKET: 1n << 0n,
  SIGNAL: 1n << 1n,
} as const;

/** The rights a rule on something other than a directory may carry (more is EINVAL). */
export const FILE_RIGHTS = FS.EXECUTE | FS.WRITE_FILE | FS.READ_FILE | FS.TRUNCATE | FS.IOCTL_DEV | FS.RESOLVE_UNIX;

/** The oldest ABI confine runs with: ABI 1 cannot let a file move between directories (REFER). */
export const MIN_ABI = 2;

const ABI1_FS = (1n << 13n) - 1n; // EXECUTE … MAKE_SYM

/** Every file-system right the ABI knows; all of them are handled, so denied unless granted. */
export function fsRights(abi: number): bigint {
  let rights = ABI1_FS;
  if (abi >= 2) rights |= FS.REFER;
  if (abi >= 3) rights |= FS.TRUNCATE;
  if (abi >= 5) rights |= FS.IOCTL_DEV;
  if (abi >= 9) rights |= FS.RESOLVE_UNIX;
  return rights;
}

/** The network rights the ABI knows (none below 4). */
export function netRights(abi: number): bigint {
  return abi >= 4 ? NET.BIND_TCP | NET.CONNECT_TCP : 0n;
}

/** The scopes the ABI knows (none below 6): both are always used where known. */
export function scopes(abi: number): bigint {
  return abi >= 6 ? SCOPE.ABSTRACT_UNIX_SOCKET | SCOPE.SIGNAL : 0n;
}

/** Reading and running: what is granted around the home directory and to readable paths (with
 *  listing, which is granted from / anyway). */
export const READ_RIGHTS = FS.EXECUTE | FS.READ_FILE | FS.READ_DIR;

/**
 * The rights a grant becomes under an ABI. A file (not a directory) gets only file rights.
 * Writable paths get every right the ABI knows, but connecting to pathname unix sockets
 * (ABI 9) only where the grant says so: /tmp holds other programs' sockets (ssh-agent, X11).
 */
export function grantRights(grant: Pick<Grant, 'access' | 'isDirectory' | 'sockets'>, abi: number): bigint {
  const known = fsRights(abi);
  if (grant.access === 'list') return grant.isDirectory ? FS.READ_DIR : 0n;
  let rights = grant.access === 'read' ? READ_RIGHTS : known & ~FS.RESOLVE_UNIX;
  if (grant.access === 'write' && grant.sockets) rights |= FS.RESOLVE_UNIX;
  if (!grant.isDirectory) rights &= FILE_RIGHTS;
  return rights & known;
}

export interface LandlockRuleset {
  abi: number;
  handledAccessFs: bigint;
  handledAccessNet: bigint;
  scoped: bigint;
  rules: { path: string; access: bigint }[];
  netRules: { port: bigint; access: bigint }[];
}

export interface RulesetOptions {
  /** Handle the network rights (so deny TCP unless a port is granted): --no-network. */
  denyNetwork?: boolean;
}

/** The ruleset for a list of grants: every known right handled, each grant a rule. */
export function buildRuleset(grants: readonly Grant[], abi: number, options: RulesetOptions = {}): LandlockRuleset {
  const rules: { path: string; access: bigint }[] = [];
  const index = new Map<string, number>();
  for (const grant of grants) {
    const access = grantRights(grant, abi);
    if (access === 0n) continue;
    // One rule per path, with the union of what was granted to it.
    const i = index.get(grant.path);
    if (i === undefined) {
      index.set(grant.path, rules.length);
      rules.push({ path: grant.path, access });
    } else {
      rules[i].access |= access;
    }
  }
  return {
    abi,
    handledAccessFs: fsRights(abi),
    handledAccessNet: options.denyNetwork ? netRights(abi) : 0n,
    scoped: scopes(abi),
    rules,
    netRules: [],
  };
}

/** Names of the rights in a mask, for -v. */
export function rightNames(mask: bigint): string[] {
  return Object.entries(FS)
    .filter(([, bit]) => (mask & bit) !== 0n)
    .map(([name]) => name.toLowerCase().replace(/_/g, '-'));
}

/** Names of the scopes in a mask, for -v. */
export function scopeNames(mask: bigint): string[] {
  const names: string[] = [];
  if (mask & SCOPE.SIGNAL) names.push('signals');
  if (mask & SCOPE.ABSTRACT_UNIX_SOCKET) names.push('abstract unix sockets');
  return names;
}

const ENOSYS = 38;
const EOPNOTSUPP = 95;

/**
 * What the kernel's answer to landlock_create_ruleset(NULL, 0, VERSION) means: the ABI, or an
 * ArbError saying why confine will not run the command and what would fix it. Never a reason to
 * run unconfined.
 */
export function requireAbi(answer: number): number {
  if (answer === -ENOSYS) {
    throw new ArbError('ARB_UNSUPPORTED', 'this kernel has no Landlock, so the command cannot be confined', {
      hint: 'confine needs Linux 5.19 or later built with CONFIG_SECURITY_LANDLOCK=y; nothing was run',
    });
  }
  if (answer === -EOPNOTSUPP) {
    throw new ArbError('ARB_UNSUPPORTED', 'Landlock is built into this kernel but turned off, so the command cannot be confined', {
      hint: "add landlock to the kernel's lsm= boot parameter (e.g. lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot; nothing was run",
    });
  }
  if (answer < 0) {
    throw new ArbError('ARB_UNSUPPORTED', `cannot ask the kernel for its Landlock version (errno ${-answer}), so the command cannot be confined`, {
      hint: 'nothing was run',
    });
  }
  if (answer < MIN_ABI) {
    throw new ArbError('ARB_UNSUPPORTED', `this kernel's Landlock (ABI ${answer}) is too old: confine needs ABI ${MIN_ABI} (Linux 5.19) or later`, {
      hint: 'ABI 1 cannot let a file be renamed or linked between directories; upgrade the kernel. Nothing was run',
    });
  }
  return answer;
}

/**
 * The kernel's Landlock ABI, as requireAbi judges it. ARB_TEST_LANDLOCK_ABI can only make it
 * refuse (0, 1, ENOSYS, EOPNOTSUPP), so that tests can see the refusals; it can never lower the
 * ABI that is enforced to one that still runs.
 */
export function readLandlockAbi(kernelAbi: () => number, env: NodeJS.ProcessEnv = process.env): number {
  const forced = env.ARB_TEST_LANDLOCK_ABI;
  const refusals: Record<string, number> = { '0': 0, '1': 1, ENOSYS: -ENOSYS, EOPNOTSUPP: -EOPNOTSUPP };
  if (forced !== undefined && forced in refusals) return requireAbi(refusals[forced]);
  return requireAbi(kernelAbi());
}
