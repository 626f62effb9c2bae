// One answer, for the whole code base, to "is this path inside that directory?". A leaf module:
// it imports nothing of arb's.
//
// Two questions, and callers say which they ask:
//   'lexical'   compares the names as given (after path.resolve: `.` and `..` are folded, as the
//               kernel would not fold them through a link). For paths already resolved (a policy's
//               grants), or where what matters is the name itself.
//   'resolved'  follows every link in both first (a path that does not exist yet is resolved
//               through its nearest existing parent), so a link that leads out of the directory is
//               outside. For a path someone else can make into a link.
// `dir` is inside itself. `/w/..bin` is inside `/w` (a name that starts with two dots is a name);
// `/w/../bin` is not. A trailing `/` on either changes nothing. Everything absolute is inside `/`.
import * as fs from 'node:fs';
import * as path from 'node:path';

export type InsideHow = 'lexical' | 'resolved';

/** The path with links resolved as far as it exists, the rest appended as named. */
export function resolveExisting(p: string): string {
  const abs = path.resolve(p);
  const rest: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(cur), ...rest.reverse());
    } catch {
      const up = path.dirname(cur);
      if (up === cur) return abs;
      rest.push(path.basename(cur));
      cur = up;
    }
  }
}

function lexicallyInside(p: string, dir: string): boolean {
  if (dir === '/') return true;
  return p === dir || p.startsWith(`${dir}/`);
}

/** Whether `p` is `dir` or lies beneath it, by name ('lexical') or after links ('resolved'). */
export function isInside(p: string, dir: string, how: InsideHow): boolean {
  if (how === 'resolved') return lexicallyInside(resolveExisting(p), resolveExisting(dir));
  return lexicallyInside(path.resolve(p), path.resolve(dir));
}

/** Whether `p` is inside any of `dirs` (see isInside). */
export function isInsideAny(p: string, dirs: readonly string[], how: InsideHow): boolean {
  // `p` resolved once, not once per directory (PATH entries are checked against many).
  const at = how === 'resolved' ? resolveExisting(p) : path.resolve(p);
  return dirs.some((d) => lexicallyInside(at, how === 'resolved' ? resolveExisting(d) : path.resolve(d)));
}
