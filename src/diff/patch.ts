// The patch of a list of changes. Only the paths that differ reach git, and only as data: arb
// reads each side's content itself (src/tree/read.ts: never through a link, never another inode
// than the walk saw) and hands it to `git fast-import` in its private repository as two commits,
// one holding the base's side of every changed path and one the fork's. Then
// `git diff-tree -p --binary -M --full-index` between their trees prints a patch that
// `git apply` takes: renames found, binary files as literal or delta data, modes and links as
// git records them. No .gitattributes, config, textconv or external diff of either tree can take
// part: git never looks at the trees at all.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Writable } from 'node:stream';

import { systemError } from '../errors';
import type { PrivateRepo } from '../git/private-git';
import type { Change, EntryStat, Tree } from '../tree/compare';
import { RelPath, showRel } from '../tree/paths';
import { changedUnderUs, openSeen, readSeenLink, sameContent } from '../tree/read';

/** A path as fast-import takes it: always C-quoted, so any byte but NUL survives. */
export function quoteForFastImport(rel: RelPath): Buffer {
  const body = rel.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
  return Buffer.from(`"${body}"`, 'latin1');
}

/** The mode git records: a link, an executable file (owner's x bit), or a file. */
export function gitMode(st: EntryStat): string {
  if (st.type === 'symlink') return '120000';
  return st.perm & 0o100 ? '100755' : '100644';
}

const CHUNK = 1 << 20;

/** Writes `data`, waiting while the pipe is full: memory stays bounded whatever the sizes. */
function put(out: Writable, data: Buffer): Promise<void> | undefined {
  if (out.write(data)) return undefined;
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      out.off('drain', done);
      out.off('error', done);
      out.off('close', closed);
      if (err) reject(err);
      else resolve();
    };
    const closed = () => done(new Error('git stopped reading its input'));
    out.on('drain', done);
    out.on('error', done);
    out.on('close', closed);
  });
}

/**
 * A regular file's content, as fast-import's `data SIZE` takes it: the very inode the walk saw,
 * read a chunk at a time (a file may be larger than Node can hold, or than memory), and exactly
 * the size the walk saw (a file changing as it is read is a tree changing under arb).
 */
async function streamFile(out: Writable, tree: Tree, rel: RelPath, st: EntryStat): Promise<void> {
  const fd = openSeen(tree, rel, st);
  try {
    let left = st.size;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(left, 1)));
      let n: number;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        throw systemError('read', showRel(tree.root, rel), err);
      }
      if (n === 0) break;
      if (n > left) throw changedUnderUs(tree, rel);
      left -= n;
      await put(out, buf.subarray(0, n));
    }
    if (left !== 0) throw changedUnderUs(tree, rel);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The fast-import stream, written as it is made: each changed path's content on each side as a
 * blob, then a commit per side. The stream ends with `done`, so a cut-short stream is an error,
 * not a smaller tree.
 */
export async function writeFastImport(out: Writable, base: Tree, fork: Tree, changes: Change[], prefix: RelPath = ''): Promise<void> {
  const lines: Record<'base' | 'fork', Buffer[]> = { base: [], fork: [] };
  let mark = 0;
  for (const c of changes) {
    // Only the mode changed: git prints no content for it (no index line either), only that
    // both sides hold the same blob; so both get an empty one, and neither git nor arb holds or
    // hashes the file (a mode change of a 10 GB file costs reading it once to compare).
    const modeOnly =
      c.base?.type === 'file' && c.fork?.type === 'file' && c.base.size === c.fork.size && sameContent(base, fork, c.path, c.base, c.fork);
    if (modeOnly) {
      mark += 1;
      await put(out, Buffer.from(`blob\nmark :${mark}\ndata 0\n\n`));
      for (const side of ['base', 'fork'] as const) {
        lines[side].push(Buffer.from(`M ${gitMode(c[side]!)} :${mark} `), quoteForFastImport(prefix + c.path), Buffer.from('\n'));
      }
      continue;
    }
    for (const side of ['base', 'fork'] as const) {
      const st = c[side];
      if (!st) continue;
      const tree = side === 'base' ? base : fork;
      mark += 1;
      if (st.type === 'symlink') {
        const target = readSeenLink(tree, c.path, st);
        await put(out, Buffer.concat([Buffer.from(`blob\nmark :${mark}\ndata ${target.length}\n`), target, Buffer.from('\n')]));
      } else {
        await put(out, Buffer.from(`blob\nmark :${mark}\ndata ${st.size}\n`));
        await streamFile(out, tree, c.path, st);
        await put(out, Buffer.from('\n'));
      }
      lines[side].push(Buffer.from(`M ${gitMode(st)} :${mark} `), quoteForFastImport(prefix + c.path), Buffer.from('\n'));
    }
  }
  for (const side of ['base', 'fork'] as const) {
    await put(out, Buffer.concat([Buffer.from(`commit refs/heads/${side}\ncommitter arb <arb@localhost> 0 +0000\ndata 0\n`), ...lines[side], Buffer.from('\n')]));
  }
  await put(out, Buffer.from('done\n'));
}

/** The fast-import stream whole (for tests; arb writes it as it goes). */
export async function fastImportStream(base: Tree, fork: Tree, changes: Change[], prefix: RelPath = ''): Promise<Buffer> {
  const parts: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      parts.push(Buffer.from(chunk));
      cb();
    },
  });
  await writeFastImport(sink, base, fork, changes, prefix);
  return Buffer.concat(parts);
}

/** A name as git C-quotes it (core.quotePath off: bytes above 0x7f as they are). */
export function quoteC(name: RelPath): string {
  const named: Record<string, string> = { '\x07': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '"': '"', '\\': '\\' };
  // eslint-disable-next-line no-control-regex
  return `"${name.replace(/[\x00-\x1f"\\\x7f]/g, (c) => `\\${named[c] ?? c.charCodeAt(0).toString(8).padStart(3, '0')}`)}"`;
}

/**
 * The `diff --git a/OLD b/NEW` line, with its names quoted when a name holds a space. git apply
 * reads the names from that line alone when no ---/+++ lines follow (a mode change, a binary
 * file, an empty file added or removed, a rename), and cannot tell where one ends if a
 * component ends in a space (`a/x  b/x `); git quotes names only for other bytes, and its own
 * patch is refused ("lacks filename information"). Quoted, any name splits. `names` are the
 * paths the patch may hold, to find where git's unquoted line splits.
 */
export function quoteHeader(line: string, names: Set<RelPath>): string {
  const start = 'diff --git a/';
  if (!line.startsWith(start)) return line;
  const body = line.slice(start.length);
  if (!body.includes(' ') || body.includes('"')) return line;
  for (let i = body.indexOf(' b/'); i !== -1; i = body.indexOf(' b/', i + 1)) {
    const a = body.slice(0, i);
    const b = body.slice(i + 3);
    if (!names.has(a) || !names.has(b)) continue;
    if (!a.includes(' ') && !b.includes(' ')) return line;
    return `diff --git ${quoteC(`a/${a}`)} ${quoteC(`b/${b}`)}`;
  }
  return line;
}

/** Passes a patch through line by line, quoting its headers (quoteHeader). */
export class HeaderQuoter {
  private partial = '';
  constructor(
    private readonly names: Set<RelPath>,
    private readonly emit: (chunk: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    const text = this.partial + chunk.toString('latin1');
    const end = text.lastIndexOf('\n');
    if (end === -1) {
      this.partial = text;
      return;
    }
    this.partial = text.slice(end + 1);
    const lines = text.slice(0, end + 1).split('\n');
    lines.pop();
    this.emit(Buffer.from(lines.map((l) => (l.startsWith('diff --git ') ? quoteHeader(l, this.names) : l)).join('\n') + '\n', 'latin1'));
  }

  end(): void {
    if (this.partial) this.emit(Buffer.from(this.partial, 'latin1'));
    this.partial = '';
  }
}

/**
 * Whether a patch with renames found still applies. git prints a rename where its new name
 * sorts, so a link renamed away (`dir -> other`) whose name becomes a directory (`dir/f` added)
 * comes after `dir/f`, and `git apply` refuses `dir/f` as "beyond a symbolic link" that the
 * patch has not yet removed. Without renames the link's deletion sorts before `dir/f`, and
 * applies. (A regular file in the way is not refused: git apply removes before it adds.)
 */
export function renamesApply(changes: Change[]): boolean {
  const linksGone = new Set<RelPath>();
  for (const c of changes) if (c.base?.type === 'symlink' && c.fork?.type !== 'symlink') linksGone.add(c.path);
  if (linksGone.size === 0) return true;
  for (const c of changes) {
    if (!c.fork) continue;
    for (let i = c.path.indexOf('/'); i !== -1; i = c.path.indexOf('/', i + 1)) {
      if (linksGone.has(c.path.slice(0, i))) return false;
    }
  }
  return true;
}

/** A patch made in the private repository: a file there, removed with it. */
export interface PatchFile {
  path: string;
  size: number;
}

/**
 * The patch that turns the base's side of `changes` into the fork's, written to a file in the
 * private repository (a patch may be larger than memory); size 0 if none. `prefix` ('' or
 * ending in '/') goes before every path in it.
 */
export async function makePatch(repo: PrivateRepo, base: Tree, fork: Tree, changes: Change[], prefix: RelPath = ''): Promise<PatchFile> {
  const file = path.join(repo.root, 'patch');
  const fd = fs.openSync(file, 'w', 0o600);
  let size = 0;
  try {
    if (changes.length === 0) return { path: file, size: 0 };
    await repo.git(['fast-import', '--quiet', '--done'], { feed: (stdin) => writeFastImport(stdin, base, fork, changes, prefix) });
    const names = new Set(changes.map((c) => prefix + c.path));
    const out = new HeaderQuoter(names, (b) => {
      fs.writeSync(fd, b);
      size += b.length;
    });
    await repo.git(
      [
        'diff-tree',
        '-r',
        '-p',
        '--binary',
        '--full-index',
        renamesApply(changes) ? '-M' : '--no-renames',
        '--no-color',
        '--no-ext-diff',
        '--no-textconv',
        '--src-prefix=a/',
        '--dst-prefix=b/',
        'refs/heads/base^{tree}',
        'refs/heads/fork^{tree}',
      ],
      { onStdout: (b) => out.push(b) },
    );
    out.end();
    return { path: file, size };
  } finally {
    fs.closeSync(fd);
  }
}
