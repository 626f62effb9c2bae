// Which paths differ between two trees, by the rules arb diff and arb fork -l share:
//
// - `.git` is left out at any depth, and so are names git would refuse in a patch;
// - what the base's .gitignore files ignore is left out, but for files the base's index tracks;
// - a path only in the fork is also left out if the fork's .gitignore files ignore it (so they
//   never leave out what was in the base);
// - a regular file or a link whose size, permissions and modification time are the same on both
//   sides is the same, unread (a fork keeps its files' times); a file that differs there is read
//   and compared byte by byte; only the executable bit of the permissions counts, as in git.
//
// The trees are walked one directory level at a time, each level of both trees listed in one call
// with what lstat says of its entries (src/tree/list-dir.ts: a link is a leaf, never followed, a
// directory is listed only if it is the one its parent's listing saw, and a file the same by lstat
// on both sides is left out there), so that git is asked about a whole level at once, and only
// about what matters: directories (an ignored one is not entered) and paths that differ. Paths
// are binary strings (src/tree/paths.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError, systemError } from '../errors';
import { isInside } from '../paths/inside';
import { PrivateRepo, withPrivateRepo } from '../git/private-git';
import { CheckIgnore, IgnoreQuery, Tracked, readTracked } from './check-ignore';
import { DirId, PairListing, Seen, listDirPairs, sameByLstat, seenAt, seenOf } from './list-dir';
import { RelPath, Root, fsPath, joinRel, realRootBytes, refusedByGit, showRel, showRoot } from './paths';
import { EntryStat, Tree, changedUnderUs, readSeenLink, sameContent } from './read';

export type { EntryStat, Tree } from './read';

/** A path that differs: its base side, its fork side (either may be absent). */
export interface Change {
  path: RelPath;
  base?: EntryStat;
  fork?: EntryStat;
}

export interface CompareOptions {
  /** A private repository to use (else one is made and removed). */
  repo?: PrivateRepo;
  /**
   * Also find the newest change to anything in the fork, ignored files and .git included: the
   * newest modification time (which `touch -d` sets, and a fork keeps from its directory).
   */
  newest?: boolean;
  /**
   * Take a file whose size, permissions and modification time match as unchanged, unread: true
   * for a fork and its base (a fork keeps its files' times), false for two directories that
   * need not come from one another (two files written in the same clock tick share a time).
   */
  trustTimes?: boolean;
  /**
   * The top of a repository both trees lie in (a fork of a monorepo's package): its .gitignore
   * files above the trees count too, unless they ignore a tree itself.
   */
  outerTop?: Buffer;
  /** Where notes go (a FIFO left out, an index git cannot read); stderr by default. */
  warn?: (message: string) => void;
}

export interface CompareResult {
  /** Sorted by path (bytewise). */
  changes: Change[];
  /** With options.newest: the newest mtime in the fork (ms since the epoch). */
  newestMtimeMs?: number;
}

/** A directory to list, on one side or both. */
interface DirNode {
  rel: RelPath;
  /** The directory on each side, as its parent's listing saw it; absent where it is not one. */
  inBase?: DirId;
  inFork?: DirId;
  /** A .gitignore file in the base applies here (in this directory or above). */
  baseRules: boolean;
  forkRules: boolean;
  /** Inside a directory the base's .gitignore ignores, entered only for the files it tracks. */
  ignoredAbove: boolean;
  /** A link in the base stands where a directory above is in the fork: git will not look beyond it. */
  baseLinkAbove: boolean;
}

/** One name in a directory, on one side or both, waiting for git's word on whether it counts. */
interface Pending {
  node: DirNode;
  rel: RelPath;
  base?: Seen;
  fork?: Seen;
  counted: boolean;
  /** A fork directory where the base has a link: git is not asked about the base there. */
  baseLink?: boolean;
  /** An ignored base directory entered for the files the base's index tracks in it. */
  enterIgnored?: boolean;
}

function entryStat(s: Seen): EntryStat {
  return {
    type: s.kind as 'file' | 'symlink',
    perm: s.mode & 0o7777,
    size: s.size,
    mtimeMs: s.mtimeMs,
    dev: s.dev,
    ino: s.ino,
  };
}

const { S_IFMT, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK } = fs.constants;

function describeOther(s: Seen): string {
  switch (s.mode & S_IFMT) {
    case S_IFIFO:
      return 'a FIFO';
    case S_IFSOCK:
      return 'a socket';
    case S_IFCHR:
    case S_IFBLK:
      return 'a device';
    default:
      return 'a special file';
  }
}

/** Same size, mode (type and permissions) and modification time. */
function statSame(a: Seen, b: Seen): boolean {
  return a.size === b.size && a.mode === b.mode && a.mtimeMs === b.mtimeMs;
}

function exec(st: EntryStat): boolean {
  return (st.perm & 0o100) !== 0;
}

class Walker {
  readonly changes: Change[] = [];
  newest = 0;
  /**
   * A fork's file whose lstat matches its base's is taken as unchanged, unread, only if it has not
   * changed since the fork was made: its change time (which `touch -r` or `touch -d` cannot set
   * back, unlike the modification time) is no later than the base's root directory's, whose
   * times arb fork sets last and which is never written after. Anything later is read.
   */
  private trustedUntilMs = -Infinity;
  private baseCheck?: CheckIgnore;
  private forkCheck?: CheckIgnore;
  private tracked?: Promise<Tracked | undefined>;

  constructor(
    private readonly repo: PrivateRepo,
    private readonly base: Tree,
    private readonly fork: Tree,
    private readonly options: CompareOptions,
    private readonly warn: (message: string) => void,
  ) {
    this.baseText = base.bytes.toString('latin1');
    this.forkText = fork.bytes.toString('latin1');
  }

  /** The roots' paths, one character per byte (as RelPath). */
  private readonly baseText: string;
  private readonly forkText: string;

  /** The path of `rel` under a root, one character per byte. */
  private pathIn(root: string, rel: RelPath): string {
    return rel === '' ? root : `${root}/${rel}`;
  }

  /**
   * Lists a level's directories on both sides in one call, as rows of what the walk needs to see
   * (src/tree/list-dir.ts): node n's are rows `start[n]` to `start[n + 1]`.
   */
  private listLevel(level: DirNode[]): PairListing {
    const listing = listDirPairs(
      level.map((node) => ({
        base: node.inBase && { path: this.pathIn(this.baseText, node.rel), id: node.inBase },
        fork: node.inFork && { path: this.pathIn(this.forkText, node.rel), id: node.inFork },
      })),
      this.trustedUntilMs,
    );
    // In the order the walk would list them one by one, the first that fails stops it.
    level.forEach((node, n) => {
      this.listed(listing.problem[2 * n], this.base, node.rel);
      this.listed(listing.problem[2 * n + 1], this.fork, node.rel);
    });
    return listing;
  }

  /** Throws unless a directory was listed, or is not there any more (as if empty, but the root). */
  private listed(problem: PairListing['problem'][number], tree: Tree, rel: RelPath): void {
    if (problem === undefined) return;
    // Another directory in its place (or in place of one above it, which may now be a link to
    // anywhere): what is there is not the tree, and arb stops rather than read it.
    if (problem === 'other') throw changedUnderUs(tree, rel);
    // A directory the fork's command removed or replaced while arb walked: as it is now.
    if (rel !== '' && (problem.code === 'ENOENT' || problem.code === 'ENOTDIR')) return;
    throw systemError('list', showRel(tree.root, rel), problem);
  }

  private lstat(tree: Tree, rel: RelPath): Seen | undefined {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(fsPath(tree.bytes, rel));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw systemError('read', showRel(tree.root, rel), err);
    }
    return seenOf(st);
  }

  private rootStat(tree: Tree): Seen {
    let st: fs.Stats;
    try {
      st = fs.statSync(tree.bytes);
    } catch (err) {
      throw systemError('read', tree.root, err);
    }
    if (!st.isDirectory()) throw new ArbError('ARB_NOT_DIRECTORY', `'${tree.root}' is not a directory`);
    return seenOf(st);
  }

  /** The newest mtime under a fork directory arb does not otherwise enter (.git, ignored). */
  private newestUnder(rel: RelPath, id: DirId): void {
    let level: { rel: RelPath; id: DirId }[] = [{ rel, id }];
    while (level.length) {
      // Fork sides alone: every entry is a row.
      const l = listDirPairs(
        level.map((d) => ({ fork: { path: this.pathIn(this.forkText, d.rel), id: d.id } })),
        this.trustedUntilMs,
      );
      const next: { rel: RelPath; id: DirId }[] = [];
      level.forEach((d, n) => {
        if (l.problem[2 * n + 1] !== undefined) return;
        this.newest = Math.max(this.newest, l.newest[n]);
        for (let r = l.start[n]; r < l.start[n + 1]; r++) {
          const s = seenAt(l, r, 1)!;
          if (s.kind === 'dir') next.push({ rel: joinRel(d.rel, l.names[r]), id: s });
        }
      });
      level = next;
    }
  }

  private skippedInFork(rel: RelPath, fork: Seen | undefined): void {
    if (this.options.newest && fork?.kind === 'dir') this.newestUnder(rel, fork);
  }

  async run(): Promise<void> {
    // A root that is not there is an error, never an empty tree (every file added or removed).
    const rootBase = this.rootStat(this.base);
    const rootFork = this.rootStat(this.fork);
    if (rootFork && this.options.newest) this.newest = rootFork.mtimeMs;
    if (rootBase && this.options.trustTimes !== false) this.trustedUntilMs = rootBase.ctimeMs;
    const outer = await this.outerRules();
    let level: DirNode[] = [
      {
        rel: '',
        inBase: rootBase?.kind === 'dir' ? rootBase : undefined,
        inFork: rootFork?.kind === 'dir' ? rootFork : undefined,
        baseRules: outer.base,
        forkRules: outer.fork,
        ignoredAbove: false,
        baseLinkAbove: false,
      },
    ];
    try {
      while (level.length) {
        const pending: Pending[] = [];
        const listing = this.listLevel(level);
        level.forEach((node, n) => this.listNode(node, listing, n, pending));
        await this.decide(pending);
        const next: DirNode[] = [];
        for (const p of pending) this.settle(p, next);
        level = next;
      }
    } finally {
      await Promise.all([this.baseCheck?.close(), this.forkCheck?.close()]);
    }
  }

  /**
   * A directory's entries on both sides, node n of the level's listing, which left out what is
   * the same by lstat (the same as entry() would).
   */
  private listNode(node: DirNode, l: PairListing, n: number, pending: Pending[]): void {
    if (this.options.newest) this.newest = Math.max(this.newest, l.newest[n]);
    for (let r = l.start[n]; r < l.start[n + 1]; r++) {
      const name = l.names[r];
      this.entry(node, joinRel(node.rel, name), name, seenAt(l, r, 0), seenAt(l, r, 1), pending);
    }
  }

  /** One name of a directory, on one side or both, that lstat does not show to be the same. */
  private entry(node: DirNode, rel: RelPath, name: string, base: Seen | undefined, fork: Seen | undefined, pending: Pending[]): void {
    if (name === '.gitignore') {
      if (base?.kind === 'file') node.baseRules = true;
      if (fork?.kind === 'file') node.forkRules = true;
    }
    if (name === '.git') {
      this.skippedInFork(rel, fork);
      return;
    }
    const refusal = refusedByGit(name, base?.kind === 'symlink' || fork?.kind === 'symlink');
    if (refusal) {
      // Said only of what differs: the directory's own odd name need not be said each time.
      const same = base && fork && base.kind === fork.kind && statSame(base, fork);
      if (!same) this.warn(`left out '${showRel(this.fork.root, rel)}': ${refusal}`);
      this.skippedInFork(rel, fork);
      return;
    }
    if (base?.kind === 'other' && fork?.kind === 'other') return;
    if (fork?.kind === 'other') this.warn(`left out '${showRel(this.fork.root, rel)}': ${describeOther(fork)} cannot be in a patch`);
    const b = base?.kind === 'other' ? undefined : base;
    const f = fork?.kind === 'other' ? undefined : fork;
    if (!b && !f) return;
    if (b && f && sameByLstat(b, f, this.trustedUntilMs)) return;
    // A directory on one side and not on the other: two paths for git, each decided alone.
    if (b && f && (b.kind === 'dir') !== (f.kind === 'dir')) {
      pending.push({ node, rel, base: b, counted: false });
      pending.push({ node, rel, fork: f, counted: false, baseLink: b.kind === 'symlink' });
    } else {
      pending.push({ node, rel, base: b, fork: f, counted: false });
    }
  }

  private trackedSet(): Promise<Tracked | undefined> {
    this.tracked ??= readTracked(this.repo, this.base.bytes, this.warn);
    return this.tracked;
  }

  /**
   * With options.outerTop: git asked from the repository's top, so that the .gitignore files above
   * each tree count. A tree those rules ignore as a whole goes by its own .gitignore files only
   * (else everything in it would be left out).
   */
  private async outerRules(): Promise<{ base: boolean; fork: boolean }> {
    const top = this.options.outerTop;
    if (!top) return { base: false, fork: false };
    const make = async (tree: Tree): Promise<CheckIgnore | undefined> => {
      const topText = top.toString('latin1');
      const rootText = tree.bytes.toString('latin1');
      if (!isInside(rootText, topText, 'lexical')) return undefined;
      const rel = path.posix.relative(topText, rootText);
      if (rel === '') return undefined;
      const check = new CheckIgnore(this.repo, this.repo.alias(top), rel, showRoot(top));
      if (await check.treeIgnored()) {
        await check.close();
        return undefined;
      }
      return check;
    };
    [this.baseCheck, this.forkCheck] = await Promise.all([make(this.base), make(this.fork)]);
    return { base: this.baseCheck !== undefined, fork: this.forkCheck !== undefined };
  }

  /** Asks git, for a whole level at once, which pending paths its .gitignore files leave out. */
  private async decide(pending: Pending[]): Promise<void> {
    const baseAsk: Pending[] = [];
    const forkAsk: Pending[] = [];
    for (const p of pending) {
      p.counted = true;
      if (p.node.ignoredAbove) {
        // Inside an ignored directory only what the base's index tracks counts.
        const tracked = await this.trackedSet();
        const isDir = p.base?.kind === 'dir';
        p.counted = !!p.base && !!tracked && (isDir ? tracked.dirs.has(p.rel) : tracked.files.has(p.rel));
        continue;
      }
      if (p.node.baseRules && !p.node.baseLinkAbove && !p.baseLink) baseAsk.push(p);
      if (!p.base && p.node.forkRules) forkAsk.push(p);
    }
    const query = (p: Pending): IgnoreQuery => ({ path: p.rel, dir: (p.base ?? p.fork)!.kind === 'dir' });
    if (baseAsk.length) this.baseCheck ??= new CheckIgnore(this.repo, this.repo.alias(this.base.bytes), '', this.base.root);
    if (forkAsk.length) this.forkCheck ??= new CheckIgnore(this.repo, this.repo.alias(this.fork.bytes), '', this.fork.root);
    const [baseIgnored, forkIgnored] = await Promise.all([
      this.baseCheck?.ask(baseAsk.map(query)) ?? [],
      this.forkCheck?.ask(forkAsk.map(query)) ?? [],
    ]);
    forkAsk.forEach((p, i) => {
      if (forkIgnored[i]) p.counted = false;
    });
    for (let i = 0; i < baseAsk.length; i++) {
      if (!baseIgnored[i]) continue;
      const p = baseAsk[i];
      p.counted = false;
      if (!p.base) continue;
      // Ignored, but tracked: a tracked file counts, and so does a directory holding one.
      const tracked = await this.trackedSet();
      if (!tracked) continue;
      if (p.base.kind === 'dir' ? tracked.dirs.has(p.rel) : tracked.files.has(p.rel)) {
        p.counted = true;
        p.enterIgnored = p.base.kind === 'dir';
      }
    }
  }

  /** Enters a directory that counts, or compares what is not one. */
  private settle(p: Pending, next: DirNode[]): void {
    if (!p.counted) {
      this.skippedInFork(p.rel, p.fork);
      return;
    }
    const b = p.base;
    const f = p.fork;
    if (b?.kind === 'dir' || f?.kind === 'dir') {
      next.push({
        rel: p.rel,
        inBase: b?.kind === 'dir' ? b : undefined,
        inFork: f?.kind === 'dir' ? f : undefined,
        baseRules: p.node.baseRules,
        forkRules: p.node.forkRules,
        ignoredAbove: p.node.ignoredAbove || !!p.enterIgnored,
        baseLinkAbove: p.node.baseLinkAbove || !!p.baseLink,
      });
      return;
    }
    const bs = b && entryStat(b);
    const fs_ = f && entryStat(f);
    if (bs && fs_ && bs.type === fs_.type) {
      if (bs.type === 'symlink') {
        if (readSeenLink(this.base, p.rel, bs).equals(readSeenLink(this.fork, p.rel, fs_))) return;
      } else if (bs.size === fs_.size && exec(bs) === exec(fs_) && sameContent(this.base, this.fork, p.rel, bs, fs_)) {
        return;
      }
    }
    this.changes.push({ path: p.rel, base: bs, fork: fs_ });
  }
}

/**
 * The paths that differ between `base` and `fork` by arb diff's rules, in bytewise order. Throws
 * an ArbError (naming the path) on anything it cannot read.
 */
export async function compareTrees(base: Root, fork: Root, options: CompareOptions = {}): Promise<CompareResult> {
  const warn = options.warn ?? ((m: string) => process.stderr.write(`arb: ${m}\n`));
  const go = async (repo: PrivateRepo): Promise<CompareResult> => {
    const walker = new Walker(repo, treeOf(base), treeOf(fork), options, warn);
    await walker.run();
    const changes = walker.changes.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
    return { changes, newestMtimeMs: options.newest ? walker.newest : undefined };
  };
  if (options.repo) return go(options.repo);
  return withPrivateRepo(go);
}

/**
 * A root as the walk keeps it: its name for messages, and its absolute path's bytes, through the
 * links the user named it by (below it, no link is ever followed).
 */
export function treeOf(root: Root): Tree {
  return { root: showRoot(root), bytes: realRootBytes(root) };
}

/** Throws unless `dir` is a directory (following a link the user named). */
export function mustBeDirectory(dir: Root, what: string, shown: string = showRoot(dir)): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch (err) {
    throw systemError(`read ${what}`, shown, err);
  }
  if (!st.isDirectory()) throw new ArbError('ARB_NOT_DIRECTORY', `${what} '${shown}' is not a directory`);
}
