// What counts in a comparison: what the .gitignore files ignore does not, but for files the
// base's index tracks. Git decides, in arb's private repository (src/git/private-git.ts), so that
// nothing in either tree configures it: `git check-ignore --no-index` with GIT_WORK_TREE set to
// the tree, which reads only the .gitignore files there (opened without following links), never
// the tree's .git/config, .git/info/exclude or hooks. One check-ignore runs per tree for the
// whole walk, answering a batch of paths per directory level over its pipes.
//
// The base's index is read only to know which files it tracks: a copy of it (and of its shared
// index, when split) is listed with `git ls-files` in the private repository.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError } from '../errors';
import { FIFO_BLOCKED, type PrivateRepo } from '../git/private-git';
import { RelPath, visible } from './paths';
import { repositoryAt } from './repo';

export interface IgnoreQuery {
  path: RelPath;
  /** A directory: patterns ending in '/' match it. */
  dir: boolean;
}

/**
 * One `git check-ignore --stdin -z --verbose --non-matching --no-index` in a work tree, asked
 * batches of paths. Each path goes in as `./PATH` (so that a name starting with ':' is not read
 * as pathspec magic) and, for a directory, with a trailing '/' (so that `build/` matches a
 * directory the work tree does not have: the base's rules are asked about the fork's new ones).
 * With --verbose --non-matching, git answers each path with exactly four fields, in order.
 */
export class CheckIgnore {
  private child: ChildProcess;
  private fields: string[] = [];
  private partial = '';
  private waiting: { count: number; answers: boolean[]; resolve: (a: boolean[]) => void; reject: (e: Error) => void }[] = [];
  private stderr = '';
  private failure?: Error;

  /**
   * `workTree` is the tree itself, or the top of a repository it lies in, with `prefix` the
   * tree's path from there (no trailing '/'), so that the .gitignore files above it count too.
   */
  constructor(
    repo: PrivateRepo,
    workTree: string,
    private readonly prefix = '',
    shown = workTree,
  ) {
    this.child = repo.start(['check-ignore', '--stdin', '-z', '--verbose', '--non-matching', '--no-index'], { workTree });
    this.child.stdout!.setEncoding('latin1');
    this.child.stdout!.on('data', (chunk: string) => this.onData(chunk));
    this.child.stderr!.on('data', (b: Buffer) => {
      this.stderr = (this.stderr + b.toString()).slice(-2000);
    });
    this.child.stdin!.on('error', () => {
      /* git exited: 'close' says why */
    });
    this.child.on('error', (e) => {
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      this.fail(
        new ArbError('ARB_GIT', missing ? 'git is not installed' : `cannot run git: ${e.message}`, {
          cause: e,
          hint: missing ? 'install git (apt-get install git)' : undefined,
        }),
      );
    });
    this.child.on('close', (status, signal) => {
      const why = repo.wasBlockedOnFifo(this.child) ? `was stopped: ${FIFO_BLOCKED}` : signal ? `was killed (${signal})` : `exited with status ${status}`;
      const said = visible(this.stderr.trim().split('\n').slice(-2).join('; '));
      this.fail(new ArbError('ARB_GIT', `git check-ignore in '${shown}' ${why}${said ? `: ${said}` : ''}`));
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const w of this.waiting.splice(0)) w.reject(this.failure);
  }

  private onData(chunk: string): void {
    const parts = (this.partial + chunk).split('\0');
    this.partial = parts.pop()!;
    for (const field of parts) {
      this.fields.push(field);
      if (this.fields.length < 4) continue;
      // source, line number, pattern, path: matched and not negated means ignored.
      const [source, , pattern] = this.fields;
      this.fields = [];
      const w = this.waiting[0];
      if (!w) continue;
      w.answers.push(source !== '' && !pattern.startsWith('!'));
      if (w.answers.length === w.count) {
        this.waiting.shift();
        w.resolve(w.answers);
      }
    }
  }

  /** For each query, whether the work tree's .gitignore files ignore it. */
  ask(queries: IgnoreQuery[]): Promise<boolean[]> {
    if (queries.length === 0) return Promise.resolve([]);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ count: queries.length, answers: [], resolve, reject });
      const under = this.prefix ? `${this.prefix}/` : '';
      const text = queries.map((q) => `./${under}${q.path}${q.dir ? '/' : ''}\0`).join('');
      this.child.stdin!.write(Buffer.from(text, 'latin1'));
    });
  }

  /** Whether the tree itself (the prefix) is ignored by the rules above it. */
  async treeIgnored(): Promise<boolean> {
    if (!this.prefix) return false;
    if (this.failure) throw this.failure;
    return new Promise((resolve, reject) => {
      this.waiting.push({ count: 1, answers: [], resolve: (a) => resolve(a[0]), reject });
      this.child.stdin!.write(Buffer.from(`./${this.prefix}/\0`, 'latin1'));
    });
  }

  /** Ends git's input and waits for it to exit (so no git is left working in the tree). */
  close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('close', () => resolve());
      this.child.stdin!.end();
    });
  }
}

/** The files a base's git index tracks, and every directory above one. */
export interface Tracked {
  files: Set<RelPath>;
  dirs: Set<RelPath>;
}

/** Copies a regular file (never through a link) into the private repository. */
function copyRegular(from: Buffer, to: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(from, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return false;
    fs.writeFileSync(to, fs.readFileSync(fd));
    return true;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The files tracked in the index of the repository at `root`, read from a copy in the private
 * repository; undefined when there is no index. A index git cannot read is warned about, and
 * counts as tracking nothing.
 */
export async function readTracked(repo: PrivateRepo, root: Buffer, warn: (message: string) => void): Promise<Tracked | undefined> {
  const dirs = repositoryAt(root, false);
  if (!dirs) return undefined;
  const gitDir = Buffer.from(dirs.gitDir, 'latin1');
  const at = (dir: Buffer, name: string) => Buffer.concat([dir, Buffer.from(`/${name}`)]);
  const copy = path.join(repo.root, 'base-index');
  if (!copyRegular(at(gitDir, 'index'), copy)) return undefined;
  // A split index names its shared part, which git looks for beside the repository's index.
  try {
    for (const name of fs.readdirSync(gitDir, { encoding: 'latin1' })) {
      if (name.startsWith('sharedindex.')) copyRegular(at(gitDir, name), path.join(repo.gitDir, name));
    }
  } catch {
    /* no shared index then */
  }
  const files = new Set<RelPath>();
  const dirSet = new Set<RelPath>();
  try {
    // A sparse index keeps whole directories as tree entries; git expands them from the
    // repository's objects, which it may read (never write) from there.
    const objects = Buffer.from(`${dirs.commonDir}/objects`, 'latin1');
    const objectDirectory = fs.existsSync(objects) ? repo.alias(objects) : undefined;
    const r = await repo.git(['ls-files', '-z', '--cached'], { workTree: repo.alias(root), indexFile: copy, objectDirectory });
    for (const file of r.stdout.toString('latin1').split('\0')) {
      if (file === '') continue;
      files.add(file);
      for (let i = file.lastIndexOf('/'); i > 0; i = file.lastIndexOf('/', i - 1)) {
        const dir = file.slice(0, i);
        if (dirSet.has(dir)) break;
        dirSet.add(dir);
      }
    }
  } catch (err) {
    warn(`cannot read the git index of '${visible(root.toString())}' (${(err as Error).message}): files it tracks that .gitignore files match are left out`);
  }
  return { files, dirs: dirSet };
}
