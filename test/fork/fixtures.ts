// Trees to fork, and a way to compare trees byte for byte and stat for stat.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { git, write } from '../diff/helpers';
import { CLI } from '../helpers/env';
import { arb } from '../helpers/run';

// git and write as arb diff's tests have them: one helper for both.
export { git, write };

/** Path of a name that is not UTF-8 (byte 0xff), as a Buffer. */
export function rawPath(dir: string, ...bytes: number[]): Buffer {
  return Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(bytes)]);
}

/** A unix socket file, left behind by a process that exits without closing it. */
export function makeSocket(file: string): void {
  execFileSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(file)}, () => process.exit(0))`]);
}

/** What a fork of the repository made by makeRepo leaves out (relative paths). */
export const IGNORED = ['node_modules', 'build/out.o', 'debug.log', 'src/generated', 'src/a.tmp', 'src/deep/err.log', 'dist'];
/** Sockets: never forked. */
export const SOCKETS = ['run.sock'];

/**
 * A repository with everything a fork must get right: uncommitted and staged changes, untracked
 * files, ignored directories and files (root and nested .gitignore), a tracked file matching an
 * ignore pattern, an executable, a set-user-ID file, links (one to /etc/passwd, one dangling),
 * a binary, odd names, an empty and a read-only directory, a FIFO and a socket, old times.
 */
export function makeRepo(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  write(path.join(dir, '.gitignore'), 'node_modules/\nbuild/\n*.log\n/dist\n');
  write(path.join(dir, 'README.md'), '# demo\n');
  write(path.join(dir, 'src/main.c'), 'int main(void) { return 0; }\n');
  write(path.join(dir, 'src/.gitignore'), 'generated/\n*.tmp\n');
  write(path.join(dir, 'src/lib/util.c'), 'int util;\n');
  write(path.join(dir, 'logs/keep.log'), 'tracked although *.log is ignored\n');
  write(path.join(dir, 'build/tracked.txt'), 'tracked inside an ignored directory\n');
  write(path.join(dir, 'run.sh'), '#!/bin/sh\necho run\n', 0o755);
  write(path.join(dir, 'bin.dat'), Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 256)));
  git(dir, ['add', '.gitignore', 'README.md', 'src', 'run.sh', 'bin.dat']);
  git(dir, ['add', '-f', 'logs/keep.log', 'build/tracked.txt']);
  git(dir, ['commit', '-q', '-m', 'initial']);

  // Uncommitted: a change, a staged new file, untracked files.
  write(path.join(dir, 'README.md'), '# demo\nchanged, not committed\n');
  write(path.join(dir, 'staged.txt'), 'staged\n');
  git(dir, ['add', 'staged.txt']);
  write(path.join(dir, 'notes.txt'), 'untracked\n');
  write(path.join(dir, 'newdir/a.txt'), 'untracked in an untracked directory\n');

  // Ignored.
  for (let i = 0; i < 50; i++) write(path.join(dir, `node_modules/pkg${i % 5}/f${i}.js`), `module.exports = ${i};\n`);
  write(path.join(dir, 'build/out.o'), 'object\n');
  write(path.join(dir, 'debug.log'), 'log\n');
  write(path.join(dir, 'src/generated/gen.c'), 'generated\n');
  write(path.join(dir, 'src/a.tmp'), 'tmp\n');
  write(path.join(dir, 'src/deep/err.log'), 'only ignored files in here\n');
  write(path.join(dir, 'dist/bundle.js'), 'bundle\n');

  // Odd things.
  write(path.join(dir, 'suid-bin'), '#!/bin/sh\n', 0o4755);
  fs.symlinkSync('README.md', path.join(dir, 'link-to-readme'));
  fs.symlinkSync('/etc/passwd', path.join(dir, 'passwd-link'));
  fs.symlinkSync('does/not/exist', path.join(dir, 'dangling'));
  write(path.join(dir, 'with space.txt'), 'space\n');
  write(path.join(dir, 'new\nline.txt'), 'newline\n');
  write(path.join(dir, 'ünïcødé-日本.txt'), 'unicode\n');
  fs.writeFileSync(rawPath(dir, 0x6e, 0xff, 0x2e, 0x62), 'not utf-8\n');
  fs.mkdirSync(path.join(dir, 'empty'));
  write(path.join(dir, 'ro/inside.txt'), 'in a read-only directory\n', 0o444);
  fs.chmodSync(path.join(dir, 'ro'), 0o555);
  execFileSync('mkfifo', [path.join(dir, 'fifo')]);
  makeSocket(path.join(dir, SOCKETS[0]));
  const old = new Date('2001-02-03T04:05:06.789Z');
  fs.utimesSync(path.join(dir, 'src/main.c'), old, old);
  fs.lutimesSync(path.join(dir, 'link-to-readme'), old, old);
  fs.utimesSync(path.join(dir, 'empty'), old, old);
}

export interface Entry {
  type: 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'other';
  mode: number;
  uid: number;
  gid: number;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs?: bigint;
  ino?: bigint;
  hash?: string;
  target?: string;
}

/**
 * Every entry under `dir` by relative path (latin1, so any byte survives), with what a fork
 * must keep. `withIdentity` adds ctime and inode, which only the untouched source keeps.
 */
export function snapshot(dir: string, withIdentity = false): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const walk = (abs: Buffer, rel: string) => {
    for (const name of fs.readdirSync(abs, { encoding: 'buffer' })) {
      const child = Buffer.concat([abs, Buffer.from('/'), name]);
      const childRel = rel ? `${rel}/${name.toString('latin1')}` : name.toString('latin1');
      const st = fs.lstatSync(child, { bigint: true });
      const e: Entry = {
        type: st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : st.isFIFO() ? 'fifo' : st.isSocket() ? 'socket' : 'other',
        mode: Number(st.mode & 0o7777n),
        uid: Number(st.uid),
        gid: Number(st.gid),
        size: st.isDirectory() ? 0n : st.size,
        mtimeNs: st.mtimeNs,
      };
      if (withIdentity) {
        e.ctimeNs = st.ctimeNs;
        e.ino = st.ino;
      }
      if (st.isFile()) e.hash = createHash('sha256').update(fs.readFileSync(child)).digest('hex');
      if (st.isSymbolicLink()) e.target = fs.readlinkSync(child, { encoding: 'buffer' }).toString('latin1');
      out.set(childRel, e);
      if (st.isDirectory()) walk(child, childRel);
    }
  };
  walk(Buffer.from(dir), '');
  const root = fs.lstatSync(dir, { bigint: true });
  out.set('.', { type: 'dir', mode: Number(root.mode & 0o7777n), uid: Number(root.uid), gid: Number(root.gid), size: 0n, mtimeNs: root.mtimeNs, ...(withIdentity ? { ctimeNs: root.ctimeNs, ino: root.ino } : {}) });
  return out;
}

/** The snapshot without the given paths and everything under them. */
export function without(snap: Map<string, Entry>, paths: string[]): Map<string, Entry> {
  const out = new Map<string, Entry>();
  for (const [k, v] of snap) {
    if (paths.some((p) => k === p || k.startsWith(`${p}/`))) continue;
    out.set(k, v);
  }
  return out;
}

/** Sorted [path, entry] pairs, for toEqual with a readable difference. */
export function entries(snap: Map<string, Entry>): [string, Entry][] {
  return [...snap.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Runs the library's fork() in a child process (the built dist), returning its result. */
export function forkLibrary(options: Record<string, unknown>): { source: string; fork: string; base: string; stats: { files: number; reflinked: number; copied: number; bytes: number; leftOut: unknown[] } } {
  const forkJs = path.join(path.dirname(CLI), 'fork', 'fork.js');
  const out = execFileSync(
    process.execPath,
    ['-e', `require(${JSON.stringify(forkJs)}).fork(JSON.parse(process.argv[1])).then((r) => process.stdout.write(JSON.stringify(r)), (e) => { console.error(e.message); process.exit(1); })`, JSON.stringify(options)],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(out);
}

/** Removes a fork, base or fixture whatever its modes. */
export function rmrf(p: string): void {
  execFileSync('rm', ['-rf', '--', p]);
}

/** A small committed repository (a.txt, src/b.c) with `gitignore` as its .gitignore. */
export function makeSmallRepo(dir: string, gitignore: string): void {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q']);
  write(path.join(dir, '.gitignore'), gitignore);
  write(path.join(dir, 'a.txt'), 'a\n');
  write(path.join(dir, 'src/b.c'), 'b\n');
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'init']);
}

/** Forks `dir` with `arb fork --print` (named `name` if given); the fork's path. */
export function forkOf(dir: string, name?: string): string {
  const r = arb(['fork', '--print', ...(name ? ['-n', name] : []), dir]);
  expect(r.status).toBe(0);
  return r.stdout.trim();
}
