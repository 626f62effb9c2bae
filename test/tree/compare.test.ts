// compareTrees: the comparison arb diff and arb fork -l share.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { compareTrees } from '../../src/tree/compare';
import { tempDir } from '../helpers/run';
import { cpFork, git, write } from '../diff/helpers';

let work: string;
beforeEach(() => {
  work = tempDir('arb-compare-');
});
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

const quiet = { warn: () => undefined };
const paths = async (base: string, fork: string) => (await compareTrees(base, fork, quiet)).changes.map((c) => c.path);

describe('compareTrees', () => {
  it('gives each changed path with its two sides', async () => {
    const dir = path.join(work, 'p');
    write(path.join(dir, 'same'), 'same\n');
    write(path.join(dir, 'mod'), 'old\n');
    write(path.join(dir, 'del'), 'x\n');
    fs.symlinkSync('same', path.join(dir, 'link'));
    const fork = cpFork(dir);
    const base = path.join(work, '.p.1.base');
    write(path.join(fork, 'mod'), 'new content\n');
    fs.rmSync(path.join(fork, 'del'));
    write(path.join(fork, 'add'), 'x\n', 0o755);
    fs.rmSync(path.join(fork, 'link'));
    fs.symlinkSync('mod', path.join(fork, 'link'));
    const { changes } = await compareTrees(base, fork, quiet);
    expect(changes.map((c) => [c.path, c.base?.type, c.fork?.type])).toEqual([
      ['add', undefined, 'file'],
      ['del', 'file', undefined],
      ['link', 'symlink', 'symlink'],
      ['mod', 'file', 'file'],
    ]);
    expect(changes[0].fork!.perm).toBe(0o755);
  });

  it('finds the newest modification anywhere in the fork, .git and ignored files included', async () => {
    const dir = path.join(work, 'p');
    write(path.join(dir, '.gitignore'), 'node_modules/\n');
    write(path.join(dir, 'a'), 'a\n');
    write(path.join(dir, '.git/HEAD'), 'ref: refs/heads/main\n');
    const fork = cpFork(dir);
    const base = path.join(work, '.p.1.base');
    const at = (iso: string, ...files: string[]) => execFileSync('touch', ['-h', '-d', iso, ...files.map((f) => path.join(fork, f))]);
    at('2020-01-01', 'a', '.gitignore', '.git/HEAD', '.git', '.');
    let r = await compareTrees(base, fork, { ...quiet, newest: true });
    expect(r.changes).toEqual([]);
    expect(new Date(r.newestMtimeMs!).toISOString()).toBe('2020-01-01T00:00:00.000Z');
    write(path.join(fork, 'node_modules/x/y.js'), 'y\n');
    at('2021-06-01', 'node_modules/x/y.js');
    at('2020-01-01', 'node_modules/x', 'node_modules', '.');
    r = await compareTrees(base, fork, { ...quiet, newest: true });
    expect(r.changes).toEqual([]);
    expect(new Date(r.newestMtimeMs!).toISOString()).toBe('2021-06-01T00:00:00.000Z');
    at('2022-03-01', '.git/HEAD');
    r = await compareTrees(base, fork, { ...quiet, newest: true });
    expect(new Date(r.newestMtimeMs!).toISOString()).toBe('2022-03-01T00:00:00.000Z');
  });

  it('enters an ignored directory only for the files the index tracks there', async () => {
    const dir = path.join(work, 'p');
    write(path.join(dir, '.gitignore'), 'vendor/\n');
    write(path.join(dir, 'vendor/kept/a.c'), 'tracked\n');
    write(path.join(dir, 'vendor/kept/b.o'), 'ignored\n');
    write(path.join(dir, 'vendor/other/c.o'), 'ignored\n');
    git(dir, ['init', '-q']);
    git(dir, ['add', '.gitignore']);
    git(dir, ['add', '-f', 'vendor/kept/a.c']);
    const fork = cpFork(dir);
    for (const f of ['vendor/kept/a.c', 'vendor/kept/b.o', 'vendor/other/c.o']) fs.appendFileSync(path.join(fork, f), 'changed\n');
    write(path.join(fork, 'vendor/kept/new.c'), 'new\n');
    expect(await paths(path.join(work, '.p.1.base'), fork)).toEqual(['vendor/kept/a.c']);
  });

  it("asks nothing of the base's rules beyond a link in the base that is a directory in the fork", async () => {
    const dir = path.join(work, 'p');
    write(path.join(dir, '.gitignore'), '*.o\n');
    write(path.join(dir, 'target/x'), 'x\n');
    fs.symlinkSync('target', path.join(dir, 'l'));
    const fork = cpFork(dir);
    fs.rmSync(path.join(fork, 'l'));
    write(path.join(fork, 'l/new.c'), 'c\n');
    write(path.join(fork, 'l/new.o'), 'o\n');
    // git would stop at "beyond a symbolic link"; the fork's own rules still leave *.o out.
    expect(await paths(path.join(work, '.p.1.base'), fork)).toEqual(['l', 'l/new.c']);
  });

  it('treats names that are pathspec magic or globs as plain names', async () => {
    const dir = path.join(work, 'p');
    write(path.join(dir, '.gitignore'), ':*\n');
    write(path.join(dir, 'keep'), 'k\n');
    const fork = cpFork(dir);
    write(path.join(fork, ':!x'), 'ignored by :*\n');
    write(path.join(fork, ':(glob)y'), 'ignored by :*\n');
    write(path.join(fork, '*'), 'a star\n');
    write(path.join(fork, '[ab]'), 'brackets\n');
    expect(await paths(path.join(work, '.p.1.base'), fork)).toEqual(['*', '[ab]']);
  });
});
