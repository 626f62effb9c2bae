// The patch of a list of changes. Only the paths that differ reach git, and only as data: arb
// reads each side's content itself (src/tree/read.ts: never through a link, never another inode
// than the walk saw) and hands it to `git fast-import` in its private repository as two commits,
// one holding the base's side of every changed path and one the fork's. Then
// `git diff-tree -p --binary -M --full-index` between their trees prints a patch that
// `git apply` takes: renames found, binary files as literal or delta data, modes and links as
// git records them. No .gitattributes, config, textconv or external diff of either tree can take
// part: git never looks at the trees at all.
import type { PrivateRepo } from '../git/private-git';
import type { Change, EntryStat, Tree } from '../tree/compare';
import { RelPath } from '../tree/paths';
import { readSeenFile, readSeenLink } from '../tree/read';

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

function content(tree: Tree, rel: RelPath, st: EntryStat): Buffer {
  return st.type === 'symlink' ? readSeenLink(tree, rel, st) : readSeenFile(tree, rel, st);
}

/**
 * The fast-import stream: each changed path's content on each side as a blob, then a commit per
 * side. The stream ends with `done`, so a cut-short stream is an error, not a smaller tree.
 */
export function fastImportStream(base: Tree, fork: Tree, changes: Change[], prefix: RelPath = ''): Buffer {
  const parts: Buffer[] = [];
  const lines: Record<'base' | 'fork', Buffer[]> = { base: [], fork: [] };
  let mark = 0;
  const blob = (data: Buffer): number => {
    mark += 1;
    parts.push(Buffer.from(`blob\nmark :${mark}\ndata ${data.length}\n`), data, Buffer.from('\n'));
    return mark;
  };
  for (const c of changes) {
    for (const side of ['base', 'fork'] as const) {
      const st = c[side];
      if (!st) continue;
      const m = blob(content(side === 'base' ? base : fork, c.path, st));
      lines[side].push(Buffer.from(`M ${gitMode(st)} :${m} `), quoteForFastImport(prefix + c.path), Buffer.from('\n'));
    }
  }
  for (const side of ['base', 'fork'] as const) {
    parts.push(Buffer.from(`commit refs/heads/${side}\ncommitter arb <arb@localhost> 0 +0000\ndata 0\n`), ...lines[side], Buffer.from('\n'));
  }
  parts.push(Buffer.from('done\n'));
  return Buffer.concat(parts);
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

/**
 * The patch that turns the base's side of `changes` into the fork's; empty if none. `prefix`
 * ('' or ending in '/') goes before every path in it.
 */
export async function makePatch(repo: PrivateRepo, base: Tree, fork: Tree, changes: Change[], prefix: RelPath = ''): Promise<Buffer> {
  if (changes.length === 0) return Buffer.alloc(0);
  await repo.git(['fast-import', '--quiet', '--done'], { input: fastImportStream(base, fork, changes, prefix) });
  const r = await repo.git([
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
  ]);
  return r.stdout;
}
