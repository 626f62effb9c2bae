// The macOS clone engine (native/darwin/clone_engine.cc), run on Linux against a stand-in for
// clonefileat(2) (test/native/darwin/fake_clonefile.cc) that copies where APFS would share
// blocks and otherwise refuses what xnu refuses. What this proves: the walk — which directories
// are cloned whole with one call and which are made anew, FIFOs remade, sockets left out, links
// never followed, modes, times and owners kept, the fallbacks to walking and copying, the
// failure report. What it cannot: how a real APFS answers (see docs/macos.md).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { REPO_ROOT, itIf } from '../helpers/env';

interface Result {
  files: number;
  directories: number;
  symlinks: number;
  fifos: number;
  bytes: number;
  reflinked: number;
  copied: number;
  clonedWhole: number;
  leftOut: { path: string; kind: string }[];
  error?: { errno: number; syscall: string; path: string };
}

let work: string;
let driver: string;

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-darwin-clone-'));
  driver = path.join(work, 'clone_driver');
  const cxx = process.env.CXX ?? 'g++';
  const r = spawnSync(
    cxx,
    [
      '-std=c++17', '-O1', '-Wall', '-Wextra', '-Wno-unused-parameter', '-Werror',
      '-Dst_atimespec=st_atim', '-Dst_mtimespec=st_mtim',
      '-I', path.join(REPO_ROOT, 'test', 'stubs', 'darwin'), '-I', path.join(REPO_ROOT, 'native'),
      path.join(REPO_ROOT, 'native', 'darwin', 'clone_engine.cc'),
      path.join(REPO_ROOT, 'test', 'native', 'darwin', 'fake_clonefile.cc'),
      path.join(REPO_ROOT, 'test', 'native', 'darwin', 'clone_driver.cc'),
      '-pthread', '-o', driver,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`cannot build the clone driver:\n${r.stderr}`);
}, 120_000);

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

const OLD = new Date('2001-02-03T04:05:06Z');
const NEWLINE_NAME = 'sp ace\nnew"line';

function sh(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
}

/**
 * A source tree: `lib/` and `pkg/sub/` have nothing skipped in them (cloned whole); `pkg/` has
 * `pkg/build/` skipped in it (made anew); the root always is made anew (base and fork are
 * reserved empty directories).
 */
function makeTree(root: string): void {
  fs.mkdirSync(path.join(root, 'lib', 'deep'), { recursive: true });
  fs.mkdirSync(path.join(root, 'node_modules', 'x'), { recursive: true });
  fs.mkdirSync(path.join(root, 'pkg', 'build'), { recursive: true });
  fs.mkdirSync(path.join(root, 'pkg', 'sub'), { recursive: true });
  fs.writeFileSync(path.join(root, 'a.txt'), 'alpha\n', { mode: 0o640 });
  fs.writeFileSync(path.join(root, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  fs.writeFileSync(path.join(root, NEWLINE_NAME), 'odd name\n');
  fs.writeFileSync(path.join(root, 'ünï.txt'), 'non-ascii\n');
  fs.symlinkSync('a.txt', path.join(root, 'link'));
  fs.symlinkSync('/nowhere/at/all', path.join(root, 'dangling'));
  fs.writeFileSync(path.join(root, 'lib', 'x.js'), 'lib\n');
  fs.writeFileSync(path.join(root, 'lib', 'deep', 'y'), 'deep\n');
  fs.writeFileSync(path.join(root, 'node_modules', 'x', 'index.js'), 'ignored\n');
  fs.writeFileSync(path.join(root, 'pkg', 'build', 'out.o'), 'ignored\n');
  fs.writeFileSync(path.join(root, 'pkg', 'index.js'), 'pkg\n');
  fs.writeFileSync(path.join(root, 'pkg', 'sub', 's'), 'sub\n');
  sh('mkfifo', ['-m', '0620', 'pipe', 'lib/fifo', 'pkg/fifo'], root);
  sh('python3', ['-c', 'import socket; socket.socket(socket.AF_UNIX).bind("pkg/sock")'], root);
  fs.chmodSync(path.join(root, 'pkg'), 0o750);
  for (const p of ['pkg', 'a.txt', 'pipe', 'pkg/fifo', '.']) fs.utimesSync(path.join(root, p), OLD, OLD);
  fs.lutimesSync(path.join(root, 'link'), OLD, OLD);
}

function freshCase(name: string): { src: string; base: string; fork: string; log: string } {
  const dir = path.join(work, name);
  const src = path.join(dir, 'src');
  fs.mkdirSync(src, { recursive: true });
  makeTree(src);
  // As src/fork/names.ts reserves them: empty, mode 0700.
  const base = path.join(dir, '.src.1.base');
  const fork = path.join(dir, 'src.1');
  fs.mkdirSync(base, { mode: 0o700 });
  fs.mkdirSync(fork, { mode: 0o700 });
  return { src, base, fork, log: path.join(dir, 'clonefile.log') };
}

function runDriver(args: string[], env: Record<string, string> = {}): Result {
  const r = spawnSync(driver, args, { encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.stderr) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as Result;
}

/** Every clonefileat call: flags, type and source path (relative to the case's directory). */
function calls(log: string): { flags: number; type: string; path: string }[] {
  if (!fs.existsSync(log)) return [];
  const text = fs.readFileSync(log, 'utf8');
  // A name may hold a newline: a call starts at a line "flags\ttype\t".
  return text
    .split(/\n(?=\d+\t)/)
    .filter(Boolean)
    .map((line) => {
      const [flags, type, ...rest] = line.replace(/\n$/, '').split('\t');
      return { flags: Number(flags), type, path: rest.join('\t') };
    });
}

/** What a tree holds, as comparable facts: type, mode, content or link target, mtime. */
function describeTree(root: string, withTimes = true): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    const abs = rel ? path.join(root, rel) : root;
    const st = fs.lstatSync(abs);
    const mode = (st.mode & 0o7777).toString(8);
    const time = withTimes ? ` ${st.mtime.toISOString()}` : '';
    if (st.isDirectory()) {
      out[rel || '.'] = `dir ${mode}${time}`;
      for (const name of fs.readdirSync(abs).sort()) walk(rel ? `${rel}/${name}` : name);
    } else if (st.isSymbolicLink()) {
      out[rel] = `link -> ${fs.readlinkSync(abs)}${time}`;
    } else if (st.isFIFO()) {
      out[rel] = `fifo ${mode}${time}`;
    } else if (st.isSocket()) {
      out[rel] = `socket`;
    } else {
      out[rel] = `file ${mode} ${JSON.stringify(fs.readFileSync(abs, 'utf8'))}${time}`;
    }
  };
  walk('');
  return out;
}

/** The source as the base must be: without what was skipped, and without the socket. */
function expectedOf(src: string, withTimes = true): Record<string, string> {
  const want = describeTree(src, withTimes);
  for (const k of Object.keys(want)) {
    if (k === 'node_modules' || k.startsWith('node_modules/') || k === 'pkg/build' || k.startsWith('pkg/build/')) delete want[k];
  }
  delete want['pkg/sock'];
  return want;
}

const SKIP = ['node_modules', './pkg/build/'];

describe('the macOS clone engine, on Linux with a stand-in clonefile', () => {
  it('clones a directory with nothing skipped in it with one call, and makes anew only what has', () => {
    const c = freshCase('whole');
    const result = runDriver([c.src, c.base, c.fork, '2', ...SKIP], { FAKE_CLONEFILE_LOG: c.log, FAKE_CLONEFILE_ROOT: `${path.dirname(c.src)}/` });
    expect(result.error).toBeUndefined();

    // Base and fork are the source, less what was skipped and the socket, with modes and times.
    const want = expectedOf(c.src);
    expect(describeTree(c.base)).toEqual(want);
    expect(describeTree(c.fork)).toEqual(want);

    const made = calls(c.log);
    const sources = made.map((m) => m.path);
    // Base pass: lib and pkg/sub whole, one call each; pkg (something skipped in it) made anew,
    // its entries one by one; FIFOs and the socket never passed to clonefile.
    expect(made.filter((m) => m.path === 'src/lib')).toEqual([{ flags: 1, type: 'dir', path: 'src/lib' }]);
    expect(sources).toContain('src/pkg/sub');
    expect(sources).toContain('src/pkg/index.js');
    expect(sources).not.toContain('src/pkg');
    expect(sources.filter((p) => p.startsWith('src/lib/'))).toEqual([]);
    expect(sources.filter((p) => /node_modules|build|fifo|pipe|sock/.test(p))).toEqual([]);
    // Fork pass: from the base, every top-level entry with one call (pkg now whole).
    expect(sources).toContain('.src.1.base/pkg');
    expect(sources.filter((p) => p.startsWith('.src.1.base/pkg/'))).toEqual([]);
    // Links cloned as links: every call has CLONE_NOFOLLOW, none CLONE_NOOWNERCOPY.
    expect(made.every((m) => m.flags === 1)).toBe(true);
    expect(made.find((m) => m.path === 'src/link')?.type).toBe('link');

    expect(result.leftOut).toEqual([{ path: 'pkg/sock', kind: 'socket' }]);
    // Counted: what the base pass looked at one by one (root and pkg entries).
    expect(result.files).toBe(5); // a.txt, run.sh, the odd name, ünï.txt, pkg/index.js
    expect(result.symlinks).toBe(2);
    expect(result.fifos).toBe(2); // pipe, pkg/fifo (lib/fifo came inside lib)
    expect(result.directories).toBe(1); // pkg
    expect(result.clonedWhole).toBe(2 + 2); // lib, pkg/sub; then lib, pkg into the fork
    expect(result.reflinked).toBe(5 + 4); // base: the five files; fork: the four at the top
    expect(result.copied).toBe(0);
  });

  it('copies, and walks every directory, where the volume has no clones (ENOTSUP)', () => {
    const c = freshCase('enotsup');
    const result = runDriver([c.src, c.base, c.fork, '3', ...SKIP], { FAKE_CLONEFILE: 'enotsup', FAKE_CLONEFILE_LOG: c.log });
    expect(result.error).toBeUndefined();
    const want = expectedOf(c.src);
    expect(describeTree(c.base)).toEqual(want);
    expect(describeTree(c.fork)).toEqual(want);
    expect(result.reflinked).toBe(0);
    expect(result.clonedWhole).toBe(0);
    expect(result.copied).toBe(8 * 2); // every non-empty regular file, in base and fork
    expect(result.fifos).toBe(3); // lib/fifo too: lib was walked
    // After the first ENOTSUP, clonefile is not asked again for each entry.
    expect(calls(c.log).length).toBe(1);
  });

  it('walks a directory the kernel will not clone whole (EINVAL, as for a mount point inside)', () => {
    const c = freshCase('nodirs');
    const result = runDriver([c.src, c.base, c.fork, '1', ...SKIP], { FAKE_CLONEFILE: 'nodirs' });
    expect(result.error).toBeUndefined();
    expect(describeTree(c.base)).toEqual(expectedOf(c.src));
    expect(describeTree(c.fork)).toEqual(expectedOf(c.src));
    expect(result.clonedWhole).toBe(0);
    expect(result.copied).toBe(0); // files still cloned one by one
    expect(result.directories).toBe(4); // lib, lib/deep, pkg, pkg/sub
  });

  it('never takes in a destination that lies inside the source', () => {
    const c = freshCase('inside');
    const inner = path.join(c.src, 'lib', 'fork-here');
    fs.mkdirSync(inner);
    const result = runDriver([c.src, inner, '-', '2', ...SKIP]);
    expect(result.error).toBeUndefined();
    expect(fs.existsSync(path.join(inner, 'lib', 'fork-here'))).toBe(false);
    expect(fs.readFileSync(path.join(inner, 'lib', 'deep', 'y'), 'utf8')).toBe('deep\n');
    // lib held the destination, so it was made anew rather than cloned whole.
    expect(result.directories).toBe(2); // lib, pkg
  });

  it('reports the first failure as errno, system call and path', () => {
    const c = freshCase('eio');
    const result = runDriver([c.src, c.base, c.fork, '1', ...SKIP], { FAKE_CLONEFILE: 'eio' });
    expect(result.error).toEqual({ errno: os.constants.errno.EIO, syscall: 'clonefile', path: expect.stringMatching(new RegExp(`^${c.src}/`)) });
  });

  it('reports a missing destination (realpath ENOENT) and a cancel (ECANCELED)', () => {
    const c = freshCase('errors');
    fs.rmdirSync(c.fork);
    expect(runDriver([c.src, c.base, c.fork, '1']).error).toEqual({ errno: os.constants.errno.ENOENT, syscall: 'realpath', path: c.fork });
    const cancelled = runDriver([c.src, c.base, '-', '1'], { DRIVER_CANCEL: '1' });
    expect(cancelled.error).toEqual({ errno: os.constants.errno.ECANCELED, syscall: 'cancel', path: '' });
  });

  itIf(process.getuid?.() === 0, 'needs root, to own files as another user')(
    'keeps owners: directories made anew and copies are chowned as the source',
    () => {
      const c = freshCase('owners');
      fs.chownSync(path.join(c.src, 'pkg'), 1234, 1234);
      fs.chownSync(path.join(c.src, 'a.txt'), 1234, 1234);
      fs.lchownSync(path.join(c.src, 'link'), 1234, 1234);
      runDriver([c.src, c.base, '-', '1', ...SKIP], { FAKE_CLONEFILE: 'enotsup' });
      for (const p of ['pkg', 'a.txt']) expect(fs.statSync(path.join(c.base, p)).uid).toBe(1234);
      expect(fs.lstatSync(path.join(c.base, 'link')).uid).toBe(1234);
      expect(fs.statSync(path.join(c.base, 'run.sh')).uid).toBe(0);
    },
  );
});
