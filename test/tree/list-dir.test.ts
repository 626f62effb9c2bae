// Listing the directories of the two trees arb diff walks, a level at a time, in pairs: what lstat
// says of each entry, from the very directory the walk saw, never through a link, leaving out the
// files the same by lstat on both sides. The native listing (Linux) and the one in JS (macOS) are
// held to the same answers.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { DirPair, PairListing, Seen, listDirPairs, listDirPairsInJs, sameByLstat, seenAt, seenOf } from '../../src/tree/list-dir';
import { hasListDirPairs } from '../../src/native';
import { tempDir } from '../helpers/run';

let dir: string;
beforeEach(() => {
  dir = tempDir('arb-list-');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const bytes = (p: string) => Buffer.from(p);
const toList = (p: string) => ({ path: bytes(p).toString('latin1'), id: fs.lstatSync(p) });

const listers: [string, typeof listDirPairs][] = [
  ['listDirPairs', listDirPairs],
  ['listDirPairsInJs', listDirPairsInJs],
];

/** Pair p's rows: [name, base's entry, fork's entry]. */
const rows = (l: PairListing, p: number): [string, Seen | undefined, Seen | undefined][] => {
  const out: [string, Seen | undefined, Seen | undefined][] = [];
  for (let r = l.start[p]; r < l.start[p + 1]; r++) out.push([l.names[r], seenAt(l, r, 0), seenAt(l, r, 1)]);
  return out;
};

const lstatOf = (d: string, name: string): Seen => seenOf(fs.lstatSync(Buffer.concat([bytes(d), Buffer.from(`/${name}`, 'latin1')])));

it('is native on Linux', () => {
  expect(hasListDirPairs()).toBe(process.platform === 'linux');
});

describe('sameByLstat', () => {
  const file = { mode: 0o100644, size: 3, mtimeMs: 1000.5, ctimeMs: 2000 };
  it('takes a file of the same type, permissions, size and time, unchanged since the fork was made', () => {
    expect(sameByLstat(file, file, 2000)).toBe(true);
    expect(sameByLstat({ ...file, mode: 0o120777 }, { ...file, mode: 0o120777 }, 2000)).toBe(true);
  });

  it.each([
    ['other permissions', { mode: 0o100755 }],
    ['another type', { mode: 0o120644 }],
    ['another size', { size: 4 }],
    ['another modification time', { mtimeMs: 1000.500001 }],
    ['a change time later than the fork', { ctimeMs: 2000.000001 }],
  ])('not one with %s', (_what, change) => {
    expect(sameByLstat(file, { ...file, ...change }, 2000)).toBe(false);
  });

  it('never a directory, nor anything when times are not trusted', () => {
    const d = { ...file, mode: 0o40755 };
    expect(sameByLstat(d, d, 2000)).toBe(false);
    expect(sameByLstat(file, file, -Infinity)).toBe(false);
  });
});

describe.each(listers)('%s', (_name, list) => {
  it('gives every entry of a fork alone with what lstat says of it, sorted bytewise, odd names and special files included', () => {
    fs.writeFileSync(path.join(dir, 'file'), 'abc');
    fs.chmodSync(path.join(dir, 'file'), 0o751);
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.symlinkSync('/etc/passwd', path.join(dir, 'link'));
    fs.writeFileSync(path.join(dir, 'new\nline'), '');
    fs.writeFileSync(path.join(dir, 'Z'), '');
    fs.writeFileSync(Buffer.concat([bytes(dir), Buffer.from([0x2f, 0x6e, 0xff, 0x80])]), 'not utf-8');
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    fs.utimesSync(path.join(dir, 'file'), 1000.123456, 1700000000.987654);

    const l = list([{ fork: toList(dir) }], Infinity);
    expect(l.problem).toEqual([undefined, undefined]);
    const names = ['Z', 'fifo', 'file', 'link', 'new\nline', 'n\xff\x80', 'sub'];
    expect(rows(l, 0)).toEqual(names.map((n) => [n, undefined, lstatOf(dir, n)]));
    expect(l.newest[0]).toBe(Math.max(...names.map((n) => lstatOf(dir, n).mtimeMs)));
    const kinds = Object.fromEntries(rows(l, 0).map(([n, , f]) => [n, f!.kind]));
    expect(kinds).toMatchObject({ file: 'file', sub: 'dir', link: 'symlink', fifo: 'other' });
    expect(seenAt(l, l.start[0] + names.indexOf('file'), 1)).toMatchObject({ size: 3, mode: 0o100751 });
  });

  it('pairs a base with its fork, leaving out what is the same by lstat but directories and .gitignore', () => {
    const base = path.join(dir, 'base');
    for (const f of ['same', 'later', 'mode', 'time', 'size', 'gone', '.gitignore']) {
      fs.mkdirSync(base, { recursive: true });
      fs.writeFileSync(path.join(base, f), 'abc');
    }
    fs.mkdirSync(path.join(base, 'dir'));
    fs.symlinkSync('same', path.join(base, 'link'));
    execFileSync('cp', ['-a', base, path.join(dir, 'fork')]);
    const fork = path.join(dir, 'fork');
    // As arb fork sets it: after the last file of the fork was made; then the clock moves on.
    const trustedUntilMs = Math.max(...fs.readdirSync(fork).map((n) => lstatOf(fork, n).ctimeMs));
    execFileSync('sleep', ['0.05']);
    fs.chmodSync(path.join(fork, 'mode'), 0o755);
    fs.utimesSync(path.join(fork, 'time'), 1, 1);
    fs.appendFileSync(path.join(fork, 'size'), 'more');
    fs.rmSync(path.join(fork, 'gone'));
    fs.writeFileSync(path.join(fork, 'new'), '');
    // Rewritten in place to the same size and time: only its change time is later.
    const st = fs.statSync(path.join(fork, 'later'));
    fs.writeFileSync(path.join(fork, 'later'), 'xyz');
    fs.utimesSync(path.join(fork, 'later'), st.atime, st.mtime);

    const l = list([{ base: toList(base), fork: toList(fork) }], trustedUntilMs);
    const got = rows(l, 0).map(([n, b, f]) => [n, b, f]);
    const expected = ['.gitignore', 'dir', 'gone', 'later', 'mode', 'new', 'size', 'time'].map((n) => [
      n,
      n === 'new' ? undefined : lstatOf(base, n),
      n === 'gone' ? undefined : lstatOf(fork, n),
    ]);
    expect(got).toEqual(expected);
    // Times not trusted (two directories): nothing is left out.
    expect(rows(list([{ base: toList(base), fork: toList(fork) }], -Infinity), 0).map(([n]) => n)).toEqual(
      ['.gitignore', 'dir', 'gone', 'later', 'link', 'mode', 'new', 'same', 'size', 'time'],
    );
  });

  it('lists many directories in one call, a large one too, each in its own rows', () => {
    const pairs: DirPair[] = [];
    for (let i = 0; i < 40; i++) {
      const d = path.join(dir, `d${i}`);
      fs.mkdirSync(d);
      for (let k = 0; k <= i % 3; k++) fs.writeFileSync(path.join(d, `f${k}-of-${i}`), '');
      pairs.push(i % 2 ? { fork: toList(d) } : { base: toList(d) });
    }
    // Over 64 KiB of directory entries: more than one getdents64.
    const big = path.join(dir, 'big');
    fs.mkdirSync(big);
    const many = Array.from({ length: 1500 }, (_, k) => `${'x'.repeat(60)}${String(k).padStart(4, '0')}`);
    for (const n of many) fs.writeFileSync(path.join(big, n), '');
    pairs.push({ base: toList(big), fork: toList(big) });

    const l = list(pairs, -Infinity);
    for (let i = 0; i < 40; i++) {
      const names = Array.from({ length: (i % 3) + 1 }, (_, k) => `f${k}-of-${i}`);
      expect(rows(l, i).map(([n, b, f]) => [n, !!b, !!f])).toEqual(names.map((n) => [n, i % 2 === 0, i % 2 === 1]));
    }
    expect(rows(l, 40).map(([n]) => n)).toEqual(many);
    // The same directory on both sides, times trusted: every file the same, none left.
    expect(rows(list([{ base: toList(big), fork: toList(big) }], Infinity), 0)).toEqual([]);
  });

  it('lists a directory whose own path is not UTF-8, by its bytes', () => {
    const odd = Buffer.concat([bytes(dir), Buffer.from([0x2f, 0x64, 0xff, 0x0a])]);
    fs.mkdirSync(odd);
    fs.writeFileSync(Buffer.concat([odd, Buffer.from('/inside')]), 'x');
    const l = list([{ fork: { path: odd.toString('latin1'), id: fs.lstatSync(odd) } }], -Infinity);
    expect(l.problem).toEqual([undefined, undefined]);
    expect(rows(l, 0).map(([n, , f]) => [n, f?.size])).toEqual([['inside', 1]]);
  });

  it('says another directory put in its place is another ("other"), on its side only', () => {
    const d = path.join(dir, 'd');
    const keep = path.join(dir, 'keep');
    fs.mkdirSync(d);
    fs.mkdirSync(keep);
    fs.writeFileSync(path.join(d, 'a'), '');
    fs.writeFileSync(path.join(keep, 'b'), '');
    const moved = toList(d);
    fs.renameSync(d, path.join(dir, 'old'));
    fs.mkdirSync(d);
    const l = list([{ base: toList(keep), fork: moved }], -Infinity);
    expect(l.problem).toEqual([undefined, 'other']);
    expect(rows(l, 0).map(([n, b, f]) => [n, !!b, !!f])).toEqual([['b', true, false]]);
  });

  it('refuses a directory above it turned into a link to elsewhere ("other"), though the names match', () => {
    // What the walk saw: top/inner with a file `secret`; then top becomes a link to a directory
    // outside the tree holding an inner/secret of its own.
    const top = path.join(dir, 'tree', 'top');
    fs.mkdirSync(path.join(top, 'inner'), { recursive: true });
    fs.writeFileSync(path.join(top, 'inner', 'secret'), 'mine');
    const seen = toList(path.join(top, 'inner'));
    const elsewhere = path.join(dir, 'elsewhere');
    fs.mkdirSync(path.join(elsewhere, 'inner'), { recursive: true });
    fs.writeFileSync(path.join(elsewhere, 'inner', 'secret'), 'SECRET');
    fs.renameSync(top, path.join(dir, 'tree', 'moved'));
    fs.symlinkSync(elsewhere, top);
    const l = list([{ fork: seen }], -Infinity);
    expect(l.problem).toEqual([undefined, 'other']);
    expect(l.names).toEqual([]);
  });

  it('fails with ENOTDIR for a link in its place, and ENOENT for nothing there', () => {
    const d = path.join(dir, 'd');
    fs.mkdirSync(d);
    const seen = toList(d);
    fs.rmdirSync(d);
    expect(list([{ base: seen }], -Infinity).problem).toEqual([expect.objectContaining({ code: 'ENOENT' }), undefined]);
    fs.symlinkSync(dir, d);
    expect(list([{ fork: seen }], -Infinity).problem).toEqual([undefined, expect.objectContaining({ code: 'ENOTDIR' })]);
  });
});
