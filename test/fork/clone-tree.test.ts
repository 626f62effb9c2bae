// The native clone engine (cloneTree, through the built dist/native.js, in a child process):
// what the end-to-end tests do not reach easily: big directories split between threads, deep
// read-only trees, what is skipped, cancelling, and failures reported as errno/syscall/path.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, itIf, testEnv } from '../helpers/env';
import { arbAsUser, tempDir } from '../helpers/run';
import { entries, rawPath, rmrf, snapshot, without, write } from './fixtures';

const NATIVE = path.join(path.dirname(CLI), 'native.js');
const env = testEnv();

interface Outcome {
  ok: boolean;
  result?: { files: number; directories: number; reflinked: number; copied: number; leftOut: { path: string; kind: string }[] };
  error?: { code: string; syscall: string; path: string; message: string };
}

/** cloneTree(options) in a child process; `skipHex` entries are raw bytes, `cancel` sets the flag first. */
function clone(options: Record<string, unknown>, extra: { skipHex?: string[]; cancel?: boolean } = {}): Outcome {
  const script = `
    const { cloneTree } = require(${JSON.stringify(NATIVE)});
    const o = JSON.parse(process.argv[1]);
    const extra = JSON.parse(process.argv[2]);
    o.skip = [...(o.skip || []), ...(extra.skipHex || []).map((h) => Buffer.from(h, 'hex'))];
    if (extra.cancel) { o.cancel = new Int32Array(new SharedArrayBuffer(4)); Atomics.store(o.cancel, 0, 1); }
    cloneTree(o).then(
      (result) => process.stdout.write(JSON.stringify({ ok: true, result })),
      (e) => process.stdout.write(JSON.stringify({ ok: false, error: { code: e.code, syscall: e.syscall, path: e.path, message: e.message } })));`;
  const out = execFileSync(process.execPath, ['-e', script, JSON.stringify(options), JSON.stringify(extra)], { encoding: 'utf8' });
  return JSON.parse(out) as Outcome;
}

describe('cloneTree', () => {
  let work: string;
  beforeEach(() => {
    work = tempDir('arb-clone-', '/var/tmp');
  });
  afterEach(() => rmrf(work));

  const dirs = () => {
    const src = path.join(work, 'src');
    const base = path.join(work, 'base');
    const fork = path.join(work, 'fork');
    fs.mkdirSync(base);
    fs.mkdirSync(fork);
    return { src, base, fork };
  };

  it('clones a directory of 1,000 files and a deep read-only tree, with every time and mode, on 1 and on 4 threads', () => {
    const { src } = dirs();
    for (let i = 0; i < 1000; i++) write(path.join(src, 'many', `f${i}`), `${i}\n`, 0o600 + (i % 2) * 0o44);
    let deep = path.join(src, 'deep');
    for (let i = 0; i < 30; i++) deep = path.join(deep, `d${i}`);
    write(path.join(deep, 'leaf'), 'leaf\n');
    // From the leaf up: read-only directories with old times, which only a clone that sets a
    // directory's mode and times after its contents (deepest first) keeps.
    const old = new Date('1999-12-31T23:59:59.5Z');
    for (let d = deep; d !== src; d = path.dirname(d)) {
      fs.utimesSync(d, old, old);
      fs.chmodSync(d, 0o555);
    }
    const expected = entries(snapshot(src));
    for (const threads of [1, 4]) {
      const base = path.join(work, `base${threads}`);
      const fork = path.join(work, `fork${threads}`);
      fs.mkdirSync(base);
      fs.mkdirSync(fork);
      const r = clone({ source: src, base, fork, skip: [], threads });
      expect(r.ok).toBe(true);
      expect(r.result).toMatchObject({ files: 1001, directories: 32 });
      expect(entries(snapshot(base))).toEqual(expected);
      expect(entries(snapshot(fork))).toEqual(expected);
    }
  });

  it('leaves out what it is told to, by path relative to the source, in any bytes', () => {
    const { src, base, fork } = dirs();
    write(path.join(src, 'keep/a'), 'a\n');
    write(path.join(src, 'keep/drop.o'), 'o\n');
    write(path.join(src, 'node_modules/x/y'), 'y\n');
    fs.mkdirSync(rawPath(src, 0xff));
    fs.writeFileSync(Buffer.concat([rawPath(src, 0xff), Buffer.from('/z')]), 'z\n');
    const r = clone({ source: src, base, fork, skip: ['node_modules/', 'keep/drop.o'] }, { skipHex: ['ff'] });
    expect(r.ok).toBe(true);
    const expected = entries(without(snapshot(src), ['node_modules', 'keep/drop.o', '\xff']));
    expect(entries(snapshot(fork))).toEqual(expected);
    expect(fs.readdirSync(base).sort()).toEqual(['keep']);
  });

  it('keeps the holes of a sparse file when it copies (ext4)', () => {
    const { src, base, fork } = dirs();
    fs.mkdirSync(src);
    const file = path.join(src, 'disk.img');
    const fd = fs.openSync(file, 'w');
    fs.ftruncateSync(fd, 1024 ** 3);
    fs.writeSync(fd, 'middle', 500_000_000);
    fs.writeSync(fd, 'end', 1024 ** 3 - 3);
    fs.closeSync(fd);
    const r = clone({ source: src, base, fork, skip: [] });
    expect(r.ok).toBe(true);
    expect(r.result).toMatchObject({ copied: 1, reflinked: 0 });
    for (const copy of [base, fork]) {
      const st = fs.statSync(path.join(copy, 'disk.img'));
      expect(st.size).toBe(1024 ** 3);
      expect(st.blocks * 512).toBeLessThan(1024 * 1024);
      const back = fs.openSync(path.join(copy, 'disk.img'), 'r');
      const buf = Buffer.alloc(6);
      fs.readSync(back, buf, 0, 6, 500_000_000);
      expect(buf.toString()).toBe('middle');
      fs.readSync(back, buf, 0, 3, 1024 ** 3 - 3);
      expect(buf.subarray(0, 3).toString()).toBe('end');
      fs.closeSync(back);
    }
  });

  it('copies files of every size byte for byte to base and fork where blocks cannot be shared (ext4)', () => {
    const { src, base, fork } = dirs();
    // Around the 1 MB that is read once and written to both; the first file finds out that
    // FICLONE does not work here, the rest are copied knowing it.
    const sizes = [0, 1, 4095, 4096, 65537, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024 + 7];
    const data = Buffer.alloc(4 * 1024 * 1024);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 12)) & 0xff;
    sizes.forEach((n, i) => write(path.join(src, `s${i}`), data.subarray(i, i + n), 0o640 + (i % 2) * 0o100));
    const r = clone({ source: src, base, fork, skip: [], threads: 1 });
    expect(r.ok).toBe(true);
    expect(r.result).toMatchObject({ files: sizes.length, copied: sizes.length - 1, reflinked: 0 });
    const expected = entries(snapshot(src));
    expect(entries(snapshot(base))).toEqual(expected);
    expect(entries(snapshot(fork))).toEqual(expected);
    sizes.forEach((n, i) => {
      for (const copy of [base, fork]) expect(fs.readFileSync(path.join(copy, `s${i}`)).equals(data.subarray(i, i + n))).toBe(true);
    });
  });

  it('makes only the base when no fork is given', () => {
    const { src, base } = dirs();
    write(path.join(src, 'a'), 'a\n');
    const r = clone({ source: src, base, skip: [] });
    expect(r.ok).toBe(true);
    expect(fs.readFileSync(path.join(base, 'a'), 'utf8')).toBe('a\n');
    expect(fs.readdirSync(path.join(work, 'fork'))).toEqual([]);
  });

  it('stops when cancelled, failing with ECANCELED', () => {
    const { src, base, fork } = dirs();
    for (let i = 0; i < 50; i++) write(path.join(src, `d${i}`, 'f'), 'f\n');
    const r = clone({ source: src, base, fork, skip: [] }, { cancel: true });
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('ECANCELED');
  });

  it('reports a failure as errno, system call and path', () => {
    const { src, fork } = dirs();
    write(path.join(src, 'a'), 'a\n');
    const r = clone({ source: src, base: path.join(work, 'missing'), fork, skip: [] });
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({ code: 'ENOENT', syscall: 'open', path: path.join(work, 'missing') });
  });

  it('refuses a base made of a link', () => {
    const { src, fork } = dirs();
    write(path.join(src, 'a'), 'a\n');
    fs.symlinkSync(fork, path.join(work, 'link'));
    const r = clone({ source: src, base: path.join(work, 'link'), fork, skip: [] });
    expect(r.ok).toBe(false);
    expect(r.error).toMatchObject({ code: 'ENOTDIR', syscall: 'open' });
    expect(fs.readdirSync(fork)).toEqual([]);
  });
});

describe('arb fork, as a user, of a tree with a directory it cannot read', () => {
  itIf(Boolean(env.user && env.userWork), env.userMissing)('fails with EACCES naming the directory, and leaves no fork or base', () => {
    const user = env.user!;
    const work = fs.mkdtempSync(path.join(env.userWork!, 'eacces-'));
    try {
      const proj = path.join(work, 'proj');
      for (let i = 0; i < 20; i++) write(path.join(proj, `f${i}`), `${i}\n`);
      write(path.join(proj, 'secret/key'), 'root only\n');
      execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, work]);
      execFileSync('chown', ['-R', 'root:root', path.join(proj, 'secret')]);
      fs.chmodSync(path.join(proj, 'secret'), 0o700);
      const r = arbAsUser(['fork', '--print', '--no-ignore'], { cwd: proj });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`arb fork: cannot fork '${proj}' to '${proj}.1': permission denied (EACCES) opening '${proj}/secret'; removed the half-made fork and base`);
      expect(fs.readdirSync(work)).toEqual(['proj']);
      // The pair: without the unreadable directory, the same fork works.
      spawnSync('rm', ['-rf', path.join(proj, 'secret')]);
      const ok = arbAsUser(['fork', '--print', '--no-ignore'], { cwd: proj });
      expect(ok.status).toBe(0);
      expect(ok.stdout.trim()).toBe(`${proj}.1`);
    } finally {
      rmrf(work);
    }
  });
});
