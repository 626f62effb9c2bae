// arb diff, -l and forking a fork, on what a hostile command left in its fork.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { arb, tempDir } from '../helpers/run';
import { cpFork, git, write } from './helpers';

let work: string;
beforeEach(() => {
  work = tempDir('arb-diff-hostile-');
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

describe('a FIFO where git reads a .gitignore', () => {
  // open(2) of a FIFO waits for a writer: git would wait forever, and arb with it.
  function hostileFork(): { dir: string; fork: string } {
    const dir = path.join(work, 'proj');
    write(path.join(dir, '.gitignore'), '*.log\n');
    write(path.join(dir, 'sub/a.txt'), 'a\n');
    git(dir, ['init', '-q']);
    const fork = cpFork(dir);
    write(path.join(fork, 'sub/new.txt'), 'new\n');
    execFileSync('mkfifo', [path.join(fork, 'sub/.gitignore')]);
    return { dir, fork };
  }

  it('stops arb diff with a message that says why, rather than hanging', () => {
    const { fork } = hostileFork();
    const r = arb(['diff', fork], { timeout: 20_000 });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('blocked on a FIFO');
  });

  it('does not hang arb fork -l', () => {
    const { dir } = hostileFork();
    const r = arb(['fork', '-l'], { cwd: dir, timeout: 20_000 });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('blocked on a FIFO');
  });

  it('does not hang forking the fork', () => {
    const { fork } = hostileFork();
    const r = arb(['fork', '--print', fork], { timeout: 20_000 });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('blocked on a FIFO');
    expect(fs.readFileSync(path.join(r.stdout.trim(), 'sub/new.txt'), 'utf8')).toBe('new\n');
  });
});

describe('a FIFO a process left running holds open, where git reads a HEAD', () => {
  // The writer lets git's open(2) through; git then waits forever to read.
  it('does not hang forking the fork', () => {
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'a.txt'), 'a\n');
    git(dir, ['init', '-q']);
    const fork = cpFork(dir);
    const nested = path.join(fork, 'nested');
    fs.mkdirSync(path.join(nested, '.git/objects'), { recursive: true });
    fs.mkdirSync(path.join(nested, '.git/refs'));
    write(path.join(nested, 'f.txt'), 'f\n');
    const head = path.join(nested, '.git/HEAD');
    execFileSync('mkfifo', [head]);
    const holder = spawn('sh', ['-c', 'exec 3<>"$1"; exec sleep 60', 'sh', head], { stdio: 'ignore' });
    try {
      // Holding it before arb starts: else git would wait to open it, the other case above.
      const pause = new Int32Array(new SharedArrayBuffer(4));
      for (let i = 0; i < 100 && !fs.existsSync(`/proc/${holder.pid}/fd/3`); i++) Atomics.wait(pause, 0, 0, 20);
      expect(fs.existsSync(`/proc/${holder.pid}/fd/3`)).toBe(true);
      const r = arb(['fork', '--print', fork], { timeout: 20_000 });
      expect(r.signal).toBeNull();
      expect(r.status).toBe(0);
      expect(r.stderr).toContain('blocked on a FIFO');
      expect(fs.readFileSync(path.join(r.stdout.trim(), 'nested/f.txt'), 'utf8')).toBe('f\n');
    } finally {
      holder.kill('SIGKILL');
    }
  });
});

describe('names that hold terminal escape sequences', () => {
  // Printed as they are, they could retitle or clear the terminal, or forge a line of arb's.
  const hostile = 'x\x1b]0;PWNED\x07\x1b[2K\rarb: all good\u202e';

  it('are shown escaped in arb diff notes', () => {
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'a.txt'), 'a\n');
    const fork = cpFork(dir);
    execFileSync('mkfifo', [path.join(fork, hostile)]);
    const r = arb(['diff', fork]);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain("left out '");
    expect(r.stderr).toContain('x\\x1b]0;PWNED\\x07\\x1b[2K\\x0darb: all good\\u{202e}');
    expect(r.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f\u202e]/);
  });

  it('are shown escaped in the notes of forking the fork', () => {
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'a.txt'), 'a\n');
    const fork = cpFork(dir);
    const sock = execFileSync('python3', ['-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', path.join(fork, hostile)]);
    expect(sock.length).toBe(0);
    const r = arb(['fork', '--print', fork]);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('x\\x1b]0;PWNED');
    expect(r.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f\u202e]/);
  });
});
