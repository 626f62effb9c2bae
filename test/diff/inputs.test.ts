// arb diff on the inputs where a patch went wrong (issue 16): names git cannot split, a relative
// DIR1 that is a repository, a working directory whose name is not UTF-8, a `.git` above a fork
// that git would not use, escape codes on a terminal, and files larger than Node can read whole.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI } from '../helpers/env';
import { tempDir } from '../helpers/run';
import { arbDiffBytes, cpFork, git, gitApply, raw, snapshot, write } from './helpers';
import { compareTrees } from '../../src/tree/compare';

let work: string;
beforeEach(() => {
  work = tempDir('arb-inputs-');
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

/** Applies `patch` with git apply in a copy of `base`; the copy's snapshot. */
function applyToCopy(base: string, patch: Buffer): { status: number | null; stderr: string; tree: Record<string, string> } {
  const copy = path.join(work, `copy-${Math.random().toString(36).slice(2)}`);
  execFileSync('cp', ['-a', '--', base, copy]);
  const r = gitApply(copy, patch);
  return { ...r, tree: snapshot(copy) };
}

describe('names git cannot split', () => {
  test('a component ending in a space, in changes with no ---/+++ lines, applies', () => {
    const a = path.join(work, 'A');
    const b = path.join(work, 'B');
    write(path.join(a, 'd /m'), 'a\n');
    write(path.join(a, 'd /gone'), '');
    write(path.join(a, 'x '), '');
    write(path.join(a, 'bin '), Buffer.from([0, 1, 2]));
    write(path.join(b, 'd /m'), 'a\n', 0o755); // mode only
    write(path.join(b, 'd /new'), ''); // a rename of an empty file
    write(path.join(b, 'y '), Buffer.from([0, 9])); // binary added; 'x ' (empty) removed
    write(path.join(b, 'bin '), Buffer.from([0, 1, 3])); // binary changed
    const r = arbDiffBytes([a, b]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    // Every header names both sides so that git can split it: quoted as git quotes names.
    for (const line of r.stdout.toString('latin1').split('\n').filter((l) => l.startsWith('diff --git '))) {
      expect(line).toMatch(/^diff --git "a\/.*" "b\/.*"$/);
    }
    const applied = applyToCopy(a, r.stdout);
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);
    expect(applied.tree).toEqual(snapshot(b));
  });
});

describe('relative directories', () => {
  test('a relative DIR1 that is a repository finds what its index tracks, as absolute paths do', () => {
    const a = path.join(work, 'A');
    write(path.join(a, '.gitignore'), '*.log\n');
    write(path.join(a, 'kept.log'), 'tracked although ignored\n');
    git(a, ['init', '-q']);
    git(a, ['add', '-f', '.gitignore', 'kept.log']);
    execFileSync('cp', ['-a', a, path.join(work, 'B')]);
    write(path.join(work, 'B', 'kept.log'), 'changed\n');
    const relative = arbDiffBytes(['A', 'B'], { cwd: work });
    const absolute = arbDiffBytes([a, path.join(work, 'B')]);
    expect(absolute.status).toBe(1);
    expect(relative.stderr).toBe('');
    expect(relative.status).toBe(1);
    expect(relative.stdout.toString()).toBe(absolute.stdout.toString());
    expect(relative.stdout.toString()).toContain('+changed');
  });

  test('in a working directory whose name is not UTF-8, relative DIR1 DIR2 are those directories', () => {
    // Node reads the name 0xff as U+FFFD: a directory by that name must not be taken for it.
    const odd = raw(work, [0x77, 0xff]);
    const decoy = path.join(work, 'w\ufffd');
    for (const [dir, text] of [
      [odd, 'real'],
      [Buffer.from(decoy), 'decoy'],
    ] as const) {
      for (const side of ['A', 'B']) fs.mkdirSync(Buffer.concat([dir, Buffer.from(`/${side}`)]), { recursive: true });
      fs.writeFileSync(Buffer.concat([dir, Buffer.from('/A/f')]), 'same\n');
      fs.writeFileSync(Buffer.concat([dir, Buffer.from('/B/f')]), `${text}\n`);
    }
    const r = spawnSync('sh', ['-c', `cd "$(printf 'w\\377')" && exec "$0" "$1" diff A B`, process.execPath, CLI], { cwd: work });
    expect(r.stderr.toString()).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout.toString()).toContain('+real');
    // And with no decoy, the same, never an empty tree.
    fs.rmSync(decoy, { recursive: true });
    const again = spawnSync('sh', ['-c', `cd "$(printf 'w\\377')" && exec "$0" "$1" diff A B`, process.execPath, CLI], { cwd: work });
    expect(again.status).toBe(1);
    expect(again.stdout.toString()).toContain('+real');
  });

  test('in a working directory whose name is not UTF-8, a relative FORK is that fork', () => {
    const odd = raw(work, [0x77, 0xff]);
    for (const [dir, text] of [
      [odd, 'real'],
      [Buffer.from(path.join(work, 'w\ufffd')), 'decoy'],
    ] as const) {
      for (const side of ['.proj.1.base', 'proj.1']) fs.mkdirSync(Buffer.concat([dir, Buffer.from(`/${side}`)]), { recursive: true });
      fs.writeFileSync(Buffer.concat([dir, Buffer.from('/.proj.1.base/f')]), 'same\n');
      // Another size: a fork's file of the base's size and time is taken as unchanged, unread.
      fs.writeFileSync(Buffer.concat([dir, Buffer.from('/proj.1/f')]), `${text}, in the fork\n`);
    }
    const r = spawnSync('sh', ['-c', `cd "$(printf 'w\\377')" && exec "$0" "$1" diff proj.1`, process.execPath, CLI], { cwd: work });
    expect(r.stderr.toString()).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout.toString()).toContain('+real');
  });

  test('a root that cannot be found is an error, never an empty tree', async () => {
    const b = path.join(work, 'B');
    write(path.join(b, 'f'), 'x\n');
    await expect(compareTrees(path.join(work, 'missing'), b, { warn: () => undefined })).rejects.toThrow(/missing/);
    await expect(compareTrees(b, path.join(work, 'missing'), { warn: () => undefined })).rejects.toThrow(/missing/);
  });
});

describe('a .git above the fork', () => {
  test('an empty .git directory above is not a repository: paths are not prefixed', () => {
    fs.mkdirSync(path.join(work, '.git'));
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'f'), 'one\n');
    const fork = cpFork(dir);
    write(path.join(fork, 'f'), 'two\n');
    const r = arbDiffBytes([fork]);
    expect(r.status).toBe(1);
    expect(r.stdout.toString()).toContain('diff --git a/f b/f');
    expect(gitApply(dir, r.stdout)).toEqual({ status: 0, stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'f'), 'utf8')).toBe('two\n');
  });

  test('a .git file naming no repository is not one', () => {
    write(path.join(work, '.git'), 'gitdir: /nonexistent\n');
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'f'), 'one\n');
    const fork = cpFork(dir);
    write(path.join(fork, 'f'), 'two\n');
    expect(arbDiffBytes([fork]).stdout.toString()).toContain('diff --git a/f b/f');
  });

  test('a valid repository above is one: paths start at its top', () => {
    git(work, ['init', '-q']);
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'f'), 'one\n');
    const fork = cpFork(dir);
    write(path.join(fork, 'f'), 'two\n');
    const r = arbDiffBytes([fork]);
    expect(r.stdout.toString()).toContain('diff --git a/proj/f b/proj/f');
    expect(gitApply(dir, r.stdout)).toEqual({ status: 0, stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'f'), 'utf8')).toBe('two\n');
  });

  const other = spawnSync('id', ['-u', process.env.ARB_TEST_USER ?? 'nobody']);
  const otherUid = Number(other.stdout?.toString().trim());
  const asRoot = process.getuid?.() === 0 && other.status === 0;
  (asRoot ? test : test.skip)('a repository above owned by another user is not one (git calls it dubious)', () => {
    git(work, ['init', '-q']);
    execFileSync('chown', ['-R', String(otherUid), path.join(work, '.git')]);
    fs.chownSync(work, otherUid, -1);
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'f'), 'one\n');
    const fork = cpFork(dir);
    write(path.join(fork, 'f'), 'two\n');
    const r = arbDiffBytes([fork], { env: { ...process.env, SUDO_UID: '', GIT_CONFIG_GLOBAL: '/dev/null' } });
    expect(r.stdout.toString()).toContain('diff --git a/f b/f');
    expect(gitApply(dir, r.stdout)).toEqual({ status: 0, stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'f'), 'utf8')).toBe('two\n');
  });
});

describe('escape codes', () => {
  function pair(): [string, string] {
    const a = path.join(work, 'A');
    const b = path.join(work, 'B');
    write(path.join(a, 'f'), 'plain\n');
    write(path.join(b, 'f'), 'plain\nerased\x1b[2K\x1b[1Gall good\x1b]52;c;aGk=\x07\r\u009b2J\n');
    return [a, b];
  }

  test('on a terminal, control characters in content are shown, not sent', () => {
    const [a, b] = pair();
    const r = spawnSync('script', ['-qec', `"${process.execPath}" "${CLI}" diff "${a}" "${b}"`, '/dev/null'], { cwd: work });
    const out = r.stdout.toString('latin1');
    expect(out).toContain('+erased\\x1b[2K\\x1b[1Gall good\\x1b]52;c;aGk=\\x07\\x0d\\u{9b}2J');
    expect(out).not.toContain('\x1b');
    expect(out).not.toContain('\x07');
  });

  test('piped, the patch is byte for byte what git apply takes', () => {
    const [a, b] = pair();
    const r = arbDiffBytes([a, b]);
    expect(r.stdout.toString('utf8')).toContain('+erased\x1b[2K\x1b[1Gall good\x1b]52;c;aGk=\x07\r\u009b2J');
    expect(applyToCopy(a, r.stdout).tree).toEqual(snapshot(b));
  });
});

describe('large files', () => {
  // Above 2 GiB Node cannot read a file whole (ERR_FS_FILE_TOO_LARGE): a sparse file that size
  // costs no disk. Only its mode changes: read to compare, never held, by arb or by git.
  const SIZE = 2 ** 31 + 4096;
  test('a file larger than 2 GiB is streamed, in bounded memory', () => {
    const a = path.join(work, 'A');
    fs.mkdirSync(a);
    const big = path.join(a, 'big.img');
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, SIZE);
    const b = path.join(work, 'B');
    execFileSync('cp', ['-a', '--sparse=always', a, b]);
    fs.chmodSync(path.join(b, 'big.img'), 0o755);
    write(path.join(b, 'small'), 'x\n');
    // arb's own peak (resourceUsage), and with the gits it ran (time -f %M: the largest).
    const preload = path.join(work, 'maxrss.js');
    fs.writeFileSync(preload, "process.on('exit', () => require('fs').writeSync(2, `maxrss=${process.resourceUsage().maxRSS}\\n`));\n");
    const r = spawnSync('/usr/bin/time', ['-f', 'all=%M', process.execPath, '-r', preload, CLI, 'diff', a, b], { timeout: 300_000 });
    const stderr = r.stderr.toString();
    expect(stderr.replace(/maxrss=\d+\n/, '').replace(/Command exited with non-zero status 1\n/, '').replace(/all=\d+\n/, '')).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout.toString()).toContain('diff --git a/big.img b/big.img\nold mode 100644\nnew mode 100755\n');
    expect(Number(/maxrss=(\d+)/.exec(stderr)![1])).toBeLessThan(300 * 1024);
    expect(Number(/all=(\d+)/.exec(stderr)![1])).toBeLessThan(300 * 1024);
  }, 300_000);

  test('a new file goes to git a chunk at a time: arb holds none of it', () => {
    const a = path.join(work, 'A');
    fs.mkdirSync(a);
    const b = path.join(work, 'B');
    fs.mkdirSync(b);
    const big = path.join(b, 'new.img');
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, 256 * 2 ** 20);
    fs.appendFileSync(big, 'end\n');
    const preload = path.join(work, 'maxrss.js');
    fs.writeFileSync(preload, "process.on('exit', () => require('fs').writeSync(2, `maxrss=${process.resourceUsage().maxRSS}\\n`));\n");
    const r = spawnSync(process.execPath, ['-r', preload, CLI, 'diff', a, b], { timeout: 300_000, maxBuffer: 1 << 28 });
    const stderr = r.stderr.toString();
    expect(stderr.replace(/maxrss=\d+\n/, '')).toBe('');
    expect(r.status).toBe(1);
    const applied = applyToCopy(a, r.stdout);
    expect(applied.status).toBe(0);
    expect(fs.statSync(path.join(work, fs.readdirSync(work).find((n) => n.startsWith('copy-'))!, 'new.img')).size).toBe(256 * 2 ** 20 + 4);
    // Read whole, it and its copy in the stream would be 512 MiB at once.
    expect(Number(/maxrss=(\d+)/.exec(stderr)![1])).toBeLessThan(200 * 1024);
  }, 300_000);
});

describe('a fork a process still works in', () => {
  test('arb diff FORK warns, with the pid, and prints the patch all the same; a fork no one works in, no warning', () => {
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'a.txt'), 'a\n');
    const fork = cpFork(dir);
    write(path.join(fork, 'a.txt'), 'b\n');
    const quiet = arbDiffBytes([fork]);
    expect(quiet.status).toBe(1);
    expect(quiet.stderr).toBe('');
    // A process left running in the fork, as a command confined by Landlock alone may leave one.
    const left = spawn('sleep', ['60'], { cwd: path.join(fork), stdio: 'ignore' });
    try {
      const busy = arbDiffBytes([fork]);
      expect(busy.status).toBe(1);
      expect(busy.stdout.equals(quiet.stdout)).toBe(true);
      expect(busy.stderr).toBe(`arb diff: a process still works in ${fork} (pid ${left.pid}): what it changes from now on is not in this patch\n`);
      // Two directories given: no fork, no warning.
      expect(arbDiffBytes([dir, fork]).stderr).toBe('');
    } finally {
      left.kill('SIGKILL');
    }
  });
});
