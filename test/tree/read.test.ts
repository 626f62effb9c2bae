// Reading a file the walk saw: never through a link, never another inode.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { EntryStat, Tree, openSeen, readSeenLink, sameContent } from '../../src/tree/read';
import type { RelPath } from '../../src/tree/paths';
import { tempDir } from '../helpers/run';

/** A file the walk saw, read through openSeen as arb diff reads it. */
function readSeenFile(t: Tree, rel: RelPath, s: EntryStat): Buffer {
  const fd = openSeen(t, rel, s);
  try {
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

let dir: string;
beforeEach(() => {
  dir = tempDir('arb-read-');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const tree = () => ({ root: dir, bytes: Buffer.from(dir) });

function seen(rel: string): EntryStat {
  const st = fs.lstatSync(path.join(dir, rel));
  return { type: st.isSymbolicLink() ? 'symlink' : 'file', perm: st.mode & 0o7777, size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino };
}

describe('openSeen', () => {
  it('reads the file the walk saw', () => {
    fs.writeFileSync(path.join(dir, 'f'), 'content');
    expect(readSeenFile(tree(), 'f', seen('f')).toString()).toBe('content');
  });

  it('refuses a link put in its place, and reads nothing through it', () => {
    fs.writeFileSync(path.join(dir, 'f'), 'content');
    fs.writeFileSync(path.join(dir, 'secret'), 'SECRET');
    const s = seen('f');
    fs.rmSync(path.join(dir, 'f'));
    fs.symlinkSync(path.join(dir, 'secret'), path.join(dir, 'f'));
    expect(() => readSeenFile(tree(), 'f', s)).toThrow(/'.*\/f' changed while arb was reading it/);
  });

  it('refuses another file put in its place, or a directory above it turned into a link', () => {
    fs.writeFileSync(path.join(dir, 'f'), 'content');
    const s = seen('f');
    fs.renameSync(path.join(dir, 'f'), path.join(dir, 'old'));
    fs.writeFileSync(path.join(dir, 'f'), 'SECRET!');
    expect(() => readSeenFile(tree(), 'f', s)).toThrow(/changed while arb was reading it/);

    fs.mkdirSync(path.join(dir, 'd'));
    fs.mkdirSync(path.join(dir, 'elsewhere'));
    fs.writeFileSync(path.join(dir, 'd/x'), 'mine');
    fs.writeFileSync(path.join(dir, 'elsewhere/x'), 'SECRET');
    const sx = seen('d/x');
    fs.renameSync(path.join(dir, 'd'), path.join(dir, 'd-old'));
    fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'd'));
    expect(() => readSeenFile(tree(), 'd/x', sx)).toThrow(/changed while arb was reading it/);
  });

  it('does not block on a FIFO put in its place', () => {
    fs.writeFileSync(path.join(dir, 'f'), 'content');
    const s = seen('f');
    fs.rmSync(path.join(dir, 'f'));
    execFileSync('mkfifo', [path.join(dir, 'f')]);
    expect(() => readSeenFile(tree(), 'f', s)).toThrow(/changed while arb was reading it/);
  });
});

describe('readSeenLink', () => {
  it("reads a link's target, not what it points to", () => {
    fs.writeFileSync(path.join(dir, 'secret'), 'SECRET');
    fs.symlinkSync('secret', path.join(dir, 'l'));
    expect(readSeenLink(tree(), 'l', seen('l')).toString()).toBe('secret');
  });

  it('refuses another link put in its place, or a directory above it turned into a link', () => {
    fs.symlinkSync('mine', path.join(dir, 'l'));
    const s = seen('l');
    fs.renameSync(path.join(dir, 'l'), path.join(dir, 'l-old'));
    fs.symlinkSync('SECRET-TARGET', path.join(dir, 'l'));
    expect(() => readSeenLink(tree(), 'l', s)).toThrow(/changed while arb was reading it/);

    // A link outside, read with the user's rights, may name what the command cannot read.
    fs.mkdirSync(path.join(dir, 'd'));
    fs.mkdirSync(path.join(dir, 'elsewhere'));
    fs.symlinkSync('mine', path.join(dir, 'd/x'));
    fs.symlinkSync('SECRET-TARGET', path.join(dir, 'elsewhere/x'));
    const sx = seen('d/x');
    fs.renameSync(path.join(dir, 'd'), path.join(dir, 'd-old'));
    fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(dir, 'd'));
    expect(() => readSeenLink(tree(), 'd/x', sx)).toThrow(/changed while arb was reading it/);
    fs.rmSync(path.join(dir, 'd'));
    fs.symlinkSync('sub/../elsewhere', path.join(dir, 'd'));
    fs.mkdirSync(path.join(dir, 'sub'));
    expect(() => readSeenLink(tree(), 'd/x', sx)).toThrow(/changed while arb was reading it/);
  });
});

describe('sameContent', () => {
  it('compares two files byte by byte, across chunks', () => {
    const other = tempDir('arb-read-');
    try {
      const big = Buffer.alloc(3 * (1 << 20) + 5, 7);
      fs.writeFileSync(path.join(dir, 'f'), big);
      fs.writeFileSync(path.join(other, 'f'), big);
      const b = { root: other, bytes: Buffer.from(other) };
      const seenOther = () => {
        const st = fs.lstatSync(path.join(other, 'f'));
        return { type: 'file' as const, perm: 0o644, size: st.size, mtimeMs: st.mtimeMs, dev: st.dev, ino: st.ino };
      };
      expect(sameContent(tree(), b, 'f', seen('f'), seenOther())).toBe(true);
      big[big.length - 1] = 8;
      fs.writeFileSync(path.join(other, 'f'), big);
      expect(sameContent(tree(), b, 'f', seen('f'), seenOther())).toBe(false);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});
