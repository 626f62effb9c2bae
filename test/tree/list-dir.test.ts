// Listing a directory of a tree arb diff walks: what lstat says of each entry, from the very
// directory the walk saw, never through a link. The native listing (Linux) and the one in JS
// (macOS) are held to the same answers.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { listDir, listInJs, Seen, seenOf } from '../../src/tree/list-dir';
import { hasListDir } from '../../src/native';
import { tempDir } from '../helpers/run';

let dir: string;
beforeEach(() => {
  dir = tempDir('arb-list-');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const bytes = (p: string) => Buffer.from(p);
const idOf = (p: string) => fs.lstatSync(p);

const listers: [string, typeof listDir][] = [
  ['listDir', listDir],
  ['listInJs', listInJs],
];

it('is native on Linux', () => {
  expect(hasListDir()).toBe(process.platform === 'linux');
});

describe.each(listers)('%s', (_name, list) => {
  it('gives every entry with what lstat says of it, odd names and special files included', () => {
    fs.writeFileSync(path.join(dir, 'file'), 'abc');
    fs.chmodSync(path.join(dir, 'file'), 0o751);
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.symlinkSync('/etc/passwd', path.join(dir, 'link'));
    fs.writeFileSync(path.join(dir, 'new\nline'), '');
    fs.writeFileSync(Buffer.concat([bytes(dir), Buffer.from([0x2f, 0x6e, 0xff, 0x80])]), 'not utf-8');
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    fs.utimesSync(path.join(dir, 'file'), 1000.123456, 1700000000.987654);

    const entries = list(bytes(dir), idOf(dir))!;
    const names = [...entries.keys()].sort();
    expect(names).toEqual(['fifo', 'file', 'link', 'new\nline', 'n\xff\x80', 'sub'].sort());
    const expected = (name: string): Seen => seenOf(fs.lstatSync(Buffer.concat([bytes(dir), Buffer.from(`/${name}`, 'latin1')])));
    for (const name of names) expect(entries.get(name)).toEqual(expected(name));
    expect(entries.get('file')).toMatchObject({ kind: 'file', size: 3, mode: 0o100751 });
    expect(entries.get('sub')?.kind).toBe('dir');
    expect(entries.get('link')?.kind).toBe('symlink');
    expect(entries.get('fifo')?.kind).toBe('other');
  });

  it('lists an empty directory as empty', () => {
    expect(list(bytes(dir), idOf(dir))!.size).toBe(0);
  });

  it('refuses another directory put in its place (undefined)', () => {
    const d = path.join(dir, 'd');
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, 'a'), '');
    const id = idOf(d);
    fs.renameSync(d, path.join(dir, 'old'));
    fs.mkdirSync(d);
    expect(list(bytes(d), id)).toBeUndefined();
  });

  it('refuses a directory above it turned into a link to elsewhere (undefined), though the names match', () => {
    // What the walk saw: top/inner with a file `secret`; then top becomes a link to a directory
    // outside the tree holding an inner/secret of its own.
    const top = path.join(dir, 'tree', 'top');
    fs.mkdirSync(path.join(top, 'inner'), { recursive: true });
    fs.writeFileSync(path.join(top, 'inner', 'secret'), 'mine');
    const id = idOf(path.join(top, 'inner'));
    const elsewhere = path.join(dir, 'elsewhere');
    fs.mkdirSync(path.join(elsewhere, 'inner'), { recursive: true });
    fs.writeFileSync(path.join(elsewhere, 'inner', 'secret'), 'SECRET');
    fs.renameSync(top, path.join(dir, 'tree', 'moved'));
    fs.symlinkSync(elsewhere, top);
    expect(list(bytes(path.join(top, 'inner')), id)).toBeUndefined();
  });

  it('fails with ENOTDIR for a link in its place, and ENOENT for nothing there', () => {
    const d = path.join(dir, 'd');
    fs.mkdirSync(d);
    const id = idOf(d);
    fs.rmdirSync(d);
    expect(() => list(bytes(d), id)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    fs.symlinkSync(dir, d);
    expect(() => list(bytes(d), id)).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
