// The mount plan: the one view of the file system every Linux jail gives the command, decided
// here once and rendered twice: to the launcher's mount operations (launcherMounts, carried out
// by native/launcher/namespaces.cc in the Landlock jail's namespaces) and to bubblewrap's
// arguments (bwrapMountArgs, in the bwrap jail), so a rule cannot hold in one and not the other:
//   - the home directories, /run, /var/run and $XDG_RUNTIME_DIR masked by empty read-only
//     tmpfs, the readable and writable paths in them bound back;
//   - a private /tmp, /dev/shm and $TMPDIR, each with a size limit;
//   - every writable path bound read-write on a read-only root;
//   - inside writable paths, what runs outside later (src/confine/caches.ts), and what lies
//     beside the fork, bound back read-only;
//   - a devpts of its own with the terminal at /dev/console (bwrap's --dev gives the same);
//   - links on the way to a bound path remade inside the masks.
// Pure, over a view of the file system (LinkView).
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { MountOpSpec } from '../native';
import { RunLaterPath, runLaterPaths } from './caches';
import { isInside } from '../paths/inside';

export type EntryKind = 'directory' | 'file' | 'symlink' | 'device' | 'other';

/** The look at the file system the mount plan needs; nodeLinks is the real one. */
export interface LinkView {
  /** What is at `p` (links not followed), or undefined if nothing. */
  lstat(p: string): EntryKind | undefined;
  readlink(p: string): string | undefined;
  /** The names in a directory (the mount plan binds back what a read-only cache top holds). */
  readdir?(p: string): string[] | undefined;
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
  readdir(p) {
    try {
      return fs.readdirSync(p);
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
  /** Files under /run that must stay, e.g. the target of /etc/resolv.conf (for DNS). */
  keepUnderRun?: readonly string[];
  /** The size limit of each private tmpfs (/tmp, /dev/shm, $TMPDIR), in bytes. */
  tmpSize?: number;
  /** What runs later from the caches (src/confine/caches.ts); default: the table for the homes. */
  runLater?: readonly RunLaterPath[];
}

/** A step of the plan, with why it is there (and, for a read-only bind inside a writable one,
 *  that it protects what runs outside later). */
export type PlannedMount = MountOpSpec & { why: string; protect?: boolean; top?: boolean };

export interface MountPlan {
  readOnlyRoot: boolean;
  ops: PlannedMount[];
  /** Said on stderr: what the plan found that it cannot undo (a link planted where a program
   *  outside looks for something it runs). */
  warnings?: string[];
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
export function buildMountPlan(input: MountPlanInput, given: LinkView = nodeLinks): MountPlan {
  // Many paths share their first components (~/.cargo/bin, ~/.cargo/env…): each is looked at
  // once per plan.
  const view = remembered(given);
  const candidates = new Map<string, PlannedMount>();
  const offer = (op: PlannedMount) => {
    const had = candidates.get(op.path);
    // A cache's top kept read-only replaces the writable bind of the cache itself.
    if (!had || PRIORITY[op.kind] < PRIORITY[had.kind] || (op.top && had.kind === 'bind-rw')) candidates.set(op.path, op);
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
    // A home directory's mask is its owner's alone, as the home usually is.
    if (real) offer({ kind: 'mask', path: real, why, ...(input.homes.includes(p as string) ? { mode: 0o700 } : {}) });
  }
  const privates: [string | undefined, string][] = [
    ['/tmp', 'a private /tmp (no X11, tmux or ssh-agent sockets of the host)'],
    ['/dev/shm', 'private shared memory'],
    [input.tmpdir, 'a private $TMPDIR (ssh-agent and others put their sockets there)'],
  ];
  for (const [p, why] of privates) {
    const real = existingDir(p);
    // Not the directory the command works in, nor a part of it: that is its work, kept.
    if (real && !(input.dir && isInside(real, input.dir, 'lexical'))) offer({ kind: 'tmpfs', path: real, why, ...(input.tmpSize ? { size: input.tmpSize } : {}) });
  }
  // The resolver configuration is often a link into /run (systemd-resolved, resolvconf): DNS
  // must keep working with /run masked. Only its target is brought back, read-only.
  for (const p of input.keepUnderRun ?? []) {
    const { real } = resolveWithLinks(p, view);
    if (isInside(real, '/run', 'lexical') && view.lstat(real) === 'file') offer({ kind: 'bind-ro', path: real, why: 'the resolver configuration (DNS), under the masked /run' });
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
  const protect: [string, string, 'dir' | 'file' | undefined][] = [];
  for (const entry of (input.pathVar ?? '').split(':')) {
    if (path.isAbsolute(entry)) protect.push([entry, 'on $PATH: a program planted there would run outside', undefined]);
  }
  for (const r of input.runLater ?? runLaterPaths(input.homes, {})) if (!r.work) protect.push([r.path, `runs outside later (${r.why})`, r.kind]);
  // Beside the fork, unless a private tmpfs hides it already: binding it back, even read-only,
  // would bring the host's files (and sockets) back into the private /tmp.
  const privateRoots = [...candidates.values()].filter((c) => c.kind === 'tmpfs').map((c) => c.path);
  for (const p of input.neighbours ?? []) {
    if (!privateRoots.some((t) => isInside(resolveWithLinks(p, view).real, t, 'lexical'))) {
      protect.push([p, 'beside the fork (the directory forked, a base, another fork): never written by the command', undefined]);
    }
  }
  // A file of the table that is not there yet cannot be made either: the directory it would be
  // in (a cache's top, such as ~/.cargo) is bound read-only, and what it holds bound back.
  const tops = new Map<string, string[]>();
  const protectedPaths = new Set<string>();
  const warnings: string[] = [];
  for (const [p, why, hint] of protect) {
    const { real } = resolveWithLinks(p, view);
    const kind = view.lstat(real);
    if (hint !== undefined) {
      // A name of the caches table that is a link (left by an earlier run with Landlock alone,
      // say): the link stays as it is (its directory's top read-only, so it cannot change), and
      // where it leads somewhere the command may write, what runs it later follows it: said.
      const parent = resolveWithLinks(path.dirname(p), view).real;
      const at = path.join(parent, path.basename(p));
      if (view.lstat(at) === 'symlink' && writable.some((w) => isInside(parent, w, 'lexical'))) {
        tops.set(parent, [...(tops.get(parent) ?? []), path.basename(p)]);
        if (writable.some((w) => isInside(real, w, 'lexical')) || (input.dir && isInside(real, input.dir, 'lexical'))) {
          warnings.push(`${at} is a link to ${real}, which the command may write: what runs it later outside (${why.replace(/^runs outside later \((.*)\)$/, '$1')}) follows it; remove the link if you did not make it`);
        }
        continue;
      }
    }
    if (input.dir && isInside(real, input.dir, 'lexical')) continue;
    if (kind === undefined && hint === 'file') {
      const parent = resolveWithLinks(path.dirname(p), view).real;
      if (view.lstat(parent) !== 'directory' || (input.dir && (isInside(parent, input.dir, 'lexical') || isInside(input.dir, parent, 'lexical')))) continue;
      if (!writable.some((w) => isInside(parent, w, 'lexical'))) continue;
      tops.set(parent, [...(tops.get(parent) ?? []), path.basename(p)]);
      continue;
    }
    if (kind !== 'directory' && kind !== 'file') continue;
    if (!writable.some((w) => w !== real && isInside(real, w, 'lexical'))) continue;
    protectedPaths.add(real);
    offer({ kind: 'bind-ro', path: real, why, protect: true });
  }
  for (const [top, names] of tops) {
    offer({ kind: 'bind-ro', path: top, why: `so that ${names.join(', ')} cannot be made there (runs outside later); what it holds is bound back`, protect: true, top: true });
    for (const name of view.readdir?.(top) ?? []) {
      const child = path.join(top, name);
      // Links stay links (the top is read-only, so they cannot change), never bound: binding
      // one would follow it.
      const kind = view.lstat(child);
      if (protectedPaths.has(child) || (kind !== 'directory' && kind !== 'file')) continue;
      offer({ kind: 'bind-rw', path: child, why: `writable, in ${top}, whose top is kept read-only` });
    }
  }

  // Parents first, so each step is judged against what is above it once the redundant ones are
  // gone: a bind inside a bind of the same or more access, or a mask inside a mask, adds nothing.
  const sorted = [...candidates.values()].sort((a, b) => depth(a.path) - depth(b.path) || (a.path < b.path ? -1 : 1));
  const kept: PlannedMount[] = [];
  const nearestAbove = (p: string) => {
    let best: MountOpSpec | undefined;
    for (const k of kept) if (k.path !== p && isInside(p, k.path, 'lexical') && (!best || depth(k.path) > depth(best.path))) best = k;
    return best;
  };
  for (const op of sorted) {
    const above = nearestAbove(op.path);
    const inHidden = above !== undefined && HIDES.has(above.kind);
    switch (op.kind) {
      case 'mask':
      case 'devpts':
        if (!inHidden) kept.push(op);
        break;
      case 'tmpfs':
        // Kept inside a hidden one too: a $TMPDIR in /tmp (pam_tmpdir's /tmp/user/UID) must
        // exist in the private /tmp, empty and private as well.
        kept.push(op);
        break;
      case 'bind-rw':
        if (op.source !== undefined || (above === undefined ? readOnlyRoot : above.kind !== 'bind-rw')) kept.push(op);
        break;
      case 'bind-ro':
        if (inHidden || op.top || (op.protect && above?.kind === 'bind-rw')) kept.push(op);
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
  return { readOnlyRoot, ops: kept, ...(warnings.length ? { warnings } : {}) };
}

/** The view, each answer kept for the one plan being made (never across plans). */
function remembered(view: LinkView): LinkView {
  const kinds = new Map<string, EntryKind | undefined>();
  const texts = new Map<string, string | undefined>();
  return {
    lstat(p) {
      if (!kinds.has(p)) kinds.set(p, view.lstat(p));
      return kinds.get(p);
    },
    readlink(p) {
      if (!texts.has(p)) texts.set(p, view.readlink(p));
      return texts.get(p);
    },
    readdir: view.readdir ? (p) => view.readdir?.(p) : undefined,
  };
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

/**
 * The files under /run that DNS needs: /etc/resolv.conf (and hosts, nsswitch.conf) are often
 * links into /run (systemd-resolved, resolvconf), which the plan masks.
 */
export function keepUnderRunPaths(): string[] {
  const keep: string[] = [];
  for (const f of ['/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf']) {
    try {
      const real = fs.realpathSync(f);
      if (isInside(real, '/run', 'lexical')) keep.push(real);
    } catch {
      /* absent or dangling: nothing to keep */
    }
  }
  return keep;
}

/** The writable grant that holds one of the fork's neighbours, if any (for Landlock alone). */
export function writableOver(neighbours: readonly string[], grants: readonly GrantLike[], dir?: string): string | undefined {
  for (const n of neighbours) {
    if (dir && isInside(n, dir, 'lexical')) continue;
    const g = grants.find((w) => w.access === 'write' && w.path !== dir && isInside(n, w.path, 'lexical'));
    if (g) return g.path;
  }
  return undefined;
}


// --- rendering ----------------------------------------------------------------------------

/** The plan as the launcher's mount operations (native/launcher/layers.h MountOp), in order. */
export function launcherMounts(plan: MountPlan): MountOpSpec[] {
  return plan.ops.map(({ why: _why, protect: _protect, top: _top, ...op }) => op);
}

/**
 * What bwrap's `--dev /dev` provides itself, so the bwrap rendering leaves it out: a devpts of
 * its own, and the command's terminal bound at /dev/console.
 */
export function jailDevice(op: MountOpSpec): boolean {
  return op.kind === 'devpts' || (op.kind === 'bind-rw' && op.path === '/dev/console');
}

function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}

/**
 * The plan as bubblewrap's arguments, in the same order: a mask or private tmpfs is --tmpfs
 * (with its mode and size), a bind --bind-try/--ro-bind-try (a path gone since it was planned
 * only takes access away, as in the launcher), a link --symlink. The masks are remounted
 * read-only once everything is mounted in them (bwrapMasks).
 */
export function bwrapMountArgs(plan: MountPlan): string[] {
  const a: string[] = [];
  for (const op of plan.ops) {
    if (jailDevice(op)) continue;
    switch (op.kind) {
      case 'mask':
        a.push('--perms', octal(op.mode ?? 0o755), '--tmpfs', op.path);
        break;
      case 'tmpfs':
        a.push('--perms', octal(op.mode ?? 0o1777));
        if (op.size) a.push('--size', String(op.size));
        a.push('--tmpfs', op.path);
        break;
      case 'bind-rw':
        a.push('--bind-try', op.source ?? op.path, op.path);
        break;
      case 'bind-ro':
        a.push('--ro-bind-try', op.source ?? op.path, op.path);
        break;
      case 'symlink':
        a.push('--symlink', op.target as string, op.path);
        break;
      default:
        break;
    }
  }
  return a;
}

/** The masks, which bwrap remounts read-only last (the launcher does it after their binds). */
export function bwrapMasks(plan: MountPlan): string[] {
  return plan.ops.filter((op) => op.kind === 'mask').map((op) => op.path);
}
