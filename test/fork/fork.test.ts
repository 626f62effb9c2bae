// arb fork end to end, run as a user would: the built arb in a child process, on a
// loop-mounted XFS (blocks shared) and on ext4 (full copies).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { testEnv, itIf } from '../helpers/env';
import { arb, arbAsUser, tempDir } from '../helpers/run';
import { IGNORED, SOCKETS, entries, forkLibrary, makeRepo, rmrf, snapshot, without, write } from './fixtures';

const env = testEnv();

interface Place {
  label: string;
  available: boolean;
  reason?: string;
  parent: () => string;
}

const places: Place[] = [
  { label: 'XFS (reflink)', available: Boolean(env.xfs), reason: env.xfsMissing ?? 'no XFS', parent: () => env.xfs as string },
  { label: 'ext4', available: true, parent: () => '/var/tmp' },
];

/** Identity (ctime, inode) dropped: what a copy must keep. */
function content(snap: ReturnType<typeof snapshot>): ReturnType<typeof snapshot> {
  const out = new Map(snap);
  for (const [k, v] of out) out.set(k, { ...v, ctimeNs: undefined, ino: undefined });
  return out;
}

for (const place of places) {
  describe(`arb fork on ${place.label}`, () => {
    let work: string;
    let repo: string;
    beforeAll(() => {
      if (!place.available) return;
      work = tempDir('arb-fork-', place.parent());
      repo = path.join(work, 'repo');
      makeRepo(repo);
    });
    afterAll(() => {
      if (work) rmrf(work);
    });

    itIf(place.available, place.reason)('makes the fork and its base equal to the directory but for what is ignored, and never changes the directory', () => {
      const before = snapshot(repo, true);
      const r = arb(['fork', '--print'], { cwd: repo });
      expect(r.stderr).toMatch(/note: left out 'run\.sock' \(socket\): sockets and devices are not forked/);
      expect(r.status).toBe(0);
      const fork = path.join(work, 'repo.1');
      expect(r.stdout).toBe(`${fork}\n`);
      const expected = entries(without(content(before), [...IGNORED, ...SOCKETS]));
      expect(entries(snapshot(fork))).toEqual(expected);
      expect(entries(snapshot(path.join(work, '.repo.1.base')))).toEqual(expected);
      // Spot checks of what the comparison covers.
      const f = snapshot(fork);
      expect(f.get('logs/keep.log')?.type).toBe('file');
      expect(f.get('build/tracked.txt')?.type).toBe('file');
      expect(f.get('src/deep')?.type).toBe('dir');
      expect(f.get('passwd-link')).toMatchObject({ type: 'symlink', target: '/etc/passwd' });
      expect(f.get('suid-bin')?.mode).toBe(0o4755);
      expect(f.get('run.sh')?.mode).toBe(0o755);
      expect(f.get('ro')?.mode).toBe(0o555);
      expect(f.get('fifo')?.type).toBe('fifo');
      expect(f.get('n\xff.b')?.type).toBe('file');
      expect(f.get('new\nline.txt')?.type).toBe('file');
      expect(f.has('node_modules')).toBe(false);
      // The directory is as it was: same entries, contents, modes, times, inodes and ctimes.
      expect(entries(snapshot(repo, true))).toEqual(entries(before));
      // The fork is a repository with the uncommitted changes.
      const status = execFileSync('git', ['status', '--porcelain'], { cwd: fork, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
      expect(status).toContain(' M README.md');
      expect(status).toContain('A  staged.txt');
      rmrf(fork);
      rmrf(path.join(work, '.repo.1.base'));
    });

    itIf(place.available, place.reason)('--no-ignore forks everything but sockets', () => {
      const before = content(snapshot(repo));
      const r = arb(['fork', '--no-ignore', '--print', repo]);
      expect(r.status).toBe(0);
      const fork = r.stdout.trim();
      expect(entries(snapshot(fork))).toEqual(entries(without(before, SOCKETS)));
      expect(fs.existsSync(path.join(fork, 'node_modules/pkg0/f0.js'))).toBe(true);
      rmrf(fork);
      rmrf(path.join(work, `.${path.basename(fork)}.base`));
    });

    itIf(place.available, place.reason)(`says in its result that files were ${place.label === 'ext4' ? 'copied' : 'reflinked'}`, () => {
      const r = forkLibrary({ dir: repo, name: 'lib' });
      expect(r.fork).toBe(path.join(work, 'repo.lib'));
      expect(r.base).toBe(path.join(work, '.repo.lib.base'));
      expect(r.stats.files).toBeGreaterThan(10);
      if (place.label === 'ext4') {
        expect(r.stats.reflinked).toBe(0);
        expect(r.stats.copied).toBeGreaterThan(10);
      } else {
        expect(r.stats.copied).toBe(0);
        expect(r.stats.reflinked).toBeGreaterThan(10);
      }
      rmrf(r.fork);
      rmrf(r.base);
    });
  });
}

describe('arb fork on XFS: space', () => {
  itIf(Boolean(env.xfs), env.xfsMissing)('forks a 200 MB file in under 20 MB of new space', () => {
    const work = tempDir('arb-big-', env.xfs);
    try {
      const dir = path.join(work, 'big');
      fs.mkdirSync(dir);
      const fd = fs.openSync(path.join(dir, 'blob'), 'w');
      const chunk = Buffer.alloc(1 << 20);
      for (let i = 0; i < 200; i++) {
        chunk.fill(i);
        chunk.writeUInt32LE(i, 0);
        fs.writeSync(fd, chunk);
      }
      fs.fsyncSync(fd);
      fs.closeSync(fd);
      const free = () => {
        const s = fs.statfsSync(work);
        return s.bavail * s.bsize;
      };
      const before = free();
      const r = forkLibrary({ dir });
      spawnSync('sync');
      const used = before - free();
      expect(used).toBeLessThan(20 * 1024 * 1024);
      expect(r.stats).toMatchObject({ files: 1, reflinked: 1, copied: 0, bytes: 200 * 1024 * 1024 });
      expect(fs.statSync(path.join(r.fork, 'blob')).size).toBe(200 * 1024 * 1024);
    } finally {
      rmrf(work);
    }
  });
});

describe('arb fork: names', () => {
  let work: string;
  let dir: string;
  beforeEach(() => {
    work = tempDir('arb-names-', '/var/tmp');
    dir = path.join(work, 'turso');
    write(path.join(dir, 'a.txt'), 'a\n');
  });
  afterEach(() => rmrf(work));

  const ls = () => fs.readdirSync(work).sort();

  it('numbers forks with the smallest N for which neither fork nor base exists', () => {
    expect(arb(['fork', '--print'], { cwd: dir }).stdout).toBe(`${work}/turso.1\n`);
    expect(arb(['fork', '--print', dir]).stdout).toBe(`${work}/turso.2\n`);
    rmrf(path.join(work, 'turso.1')); // its base stays: 1 is still taken
    expect(arb(['fork', '--print', dir]).stdout).toBe(`${work}/turso.3\n`);
    rmrf(path.join(work, 'turso.2'));
    rmrf(path.join(work, '.turso.2.base'));
    expect(arb(['fork', '--print', dir]).stdout).toBe(`${work}/turso.2\n`);
    expect(ls()).toEqual(['.turso.1.base', '.turso.2.base', '.turso.3.base', 'turso', 'turso.2', 'turso.3']);
  });

  it('never gives two forks started at once the same name', async () => {
    const runs = await Promise.all(
      Array.from({ length: 6 }, () =>
        new Promise<{ status: number | null; stdout: string }>((resolve) => {
          const child = spawn(process.execPath, [path.join(__dirname, '../../dist/cli.js'), 'fork', '--print', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
          let stdout = '';
          child.stdout.on('data', (b) => (stdout += b));
          child.on('close', (status) => resolve({ status, stdout }));
        }),
      ),
    );
    expect(runs.map((r) => r.status)).toEqual([0, 0, 0, 0, 0, 0]);
    const forks = runs.map((r) => r.stdout.trim()).sort();
    expect(forks).toEqual([1, 2, 3, 4, 5, 6].map((n) => `${work}/turso.${n}`));
    for (const f of forks) {
      expect(fs.readFileSync(path.join(f, 'a.txt'), 'utf8')).toBe('a\n');
      expect(fs.existsSync(path.join(work, `.${path.basename(f)}.base`, 'a.txt'))).toBe(true);
    }
  });

  it('-n NAME makes DIR.NAME with no number, and refuses it when it exists', () => {
    const r = arb(['fork', '-n', 'swebench', '--print', dir]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${work}/turso.swebench\n`);
    expect(fs.existsSync(path.join(work, '.turso.swebench.base/a.txt'))).toBe(true);
    const again = arb(['fork', '-n', 'swebench', '--print', dir]);
    expect(again.status).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/arb fork: cannot fork to '.*turso\.swebench': '.*turso\.swebench' already exists: choose another name/);
    expect(ls()).toEqual(['.turso.swebench.base', 'turso', 'turso.swebench']);
  });

  it('-n NAME refuses a name whose base is left over', () => {
    fs.mkdirSync(path.join(work, '.turso.x.base'));
    const r = arb(['fork', '-n', 'x', '--print', dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/'.*\.turso\.x\.base' already exists: a base is left from an earlier fork/);
    expect(ls()).toEqual(['.turso.x.base', 'turso']);
  });

  it.each([
    ['a/b', 'contains a /'],
    ['..', 'names a directory'],
    ['.', 'names a directory'],
    ['.hidden', 'starts with a dot'],
    ['', 'it is empty'],
    ['tab\there', 'control character'],
    ['x'.repeat(201), 'longer than 200 bytes'],
  ])('refuses -n %j with usage status 2 and makes nothing', (name, why) => {
    const r = arb(['fork', '-n', name, '--print', dir]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('arb fork: -n: bad fork name');
    expect(r.stderr).toContain(why);
    expect(ls()).toEqual(['turso']);
  });

  it('DIR DEST forks to DEST with its base beside it', () => {
    const dest = path.join(work, 'elsewhere', 'mine');
    fs.mkdirSync(path.dirname(dest));
    const r = arb(['fork', '--print', dir, dest]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${dest}\n`);
    expect(fs.readFileSync(path.join(dest, 'a.txt'), 'utf8')).toBe('a\n');
    expect(fs.readdirSync(path.dirname(dest)).sort()).toEqual(['.mine.base', 'mine']);
  });

  it('refuses a DEST that exists, and makes nothing', () => {
    const dest = path.join(work, 'taken');
    fs.mkdirSync(dest);
    const r = arb(['fork', '--print', dir, dest]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/arb fork: cannot fork to '.*taken': '.*taken' already exists/);
    expect(ls()).toEqual(['taken', 'turso']);
    expect(fs.readdirSync(dest)).toEqual([]);
  });

  it('refuses a DEST inside DIR', () => {
    const r = arb(['fork', '--print', dir, path.join(dir, 'sub')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('the fork would be inside the directory it forks');
    expect(fs.readdirSync(dir)).toEqual(['a.txt']);
  });

  it('refuses a missing DIR, and a DIR that is a file', () => {
    const missing = arb(['fork', '--print', path.join(work, 'nope')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/arb fork: cannot fork '.*nope': no such directory: check the path/);
    const file = arb(['fork', '--print', path.join(dir, 'a.txt')]);
    expect(file.status).toBe(1);
    expect(file.stderr).toMatch(/arb fork: cannot fork '.*a\.txt': not a directory/);
    expect(ls()).toEqual(['turso']);
  });

  it('works the same as fsfork', () => {
    const r = arb(['--print', '-n', 'alias'], { cwd: dir }, 'fsfork');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${work}/turso.alias\n`);
    const bad = arb(['-n', '..'], { cwd: dir }, 'fsfork');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^fsfork: -n: bad fork name/m);
  });
});

describe('arb fork: when git cannot say', () => {
  let work: string;
  let repo: string;
  beforeAll(() => {
    work = tempDir('arb-nogit-', '/var/tmp');
    repo = path.join(work, 'repo');
    makeRepo(repo);
  });
  afterAll(() => rmrf(work));

  it('warns and forks everything when git is not installed', () => {
    const r = arb(['fork', '--print'], { cwd: repo, env: { ...process.env, PATH: '/nonexistent' } });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/arb fork: warning: cannot tell what git ignores in '.*repo' \(git is not installed\): forking everything/);
    expect(fs.existsSync(path.join(r.stdout.trim(), 'node_modules/pkg0/f0.js'))).toBe(true);
  });

  it('warns and forks everything when the index is corrupt', () => {
    const index = path.join(repo, '.git', 'index');
    const saved = fs.readFileSync(index);
    fs.writeFileSync(index, 'not an index\n');
    try {
      const r = arb(['fork', '--print'], { cwd: repo });
      expect(r.status).toBe(0);
      expect(r.stderr).toMatch(/arb fork: warning: cannot tell what git ignores in '.*repo' \(.*index.*\): forking everything/);
      expect(fs.existsSync(path.join(r.stdout.trim(), 'node_modules/pkg0/f0.js'))).toBe(true);
    } finally {
      fs.writeFileSync(index, saved);
    }
  });
});

describe('arb fork: on a terminal', () => {
  it('starts $SHELL in the fork and returns its status', () => {
    const work = tempDir('arb-tty-', '/var/tmp');
    try {
      const dir = path.join(work, 'proj');
      write(path.join(dir, 'a.txt'), 'a\n');
      const shell = path.join(work, 'fake-shell');
      const marker = path.join(work, 'where');
      write(shell, `#!/bin/sh\npwd > ${marker}\nexit 7\n`, 0o755);
      // script(1) runs the command with $SHELL, so the fake shell is given to arb alone.
      const cmd = `SHELL=${shell} ${process.execPath} ${path.join(__dirname, '../../dist/cli.js')} fork`;
      const r = spawnSync('script', ['-qefc', cmd, '/dev/null'], { cwd: dir, env: { ...process.env, SHELL: '/bin/sh' }, encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(7);
      expect(fs.readFileSync(marker, 'utf8').trim()).toBe(path.join(work, 'proj.1'));
      expect(r.stdout).toContain(`starting ${shell} in ${path.join(work, 'proj.1')}`);
    } finally {
      rmrf(work);
    }
  });

  it('prints the path instead with --print', () => {
    const work = tempDir('arb-tty-', '/var/tmp');
    try {
      const dir = path.join(work, 'proj');
      write(path.join(dir, 'a.txt'), 'a\n');
      const cmd = `SHELL=/bin/false ${process.execPath} ${path.join(__dirname, '../../dist/cli.js')} fork --print`;
      const r = spawnSync('script', ['-qefc', cmd, '/dev/null'], { cwd: dir, env: { ...process.env, SHELL: '/bin/sh' }, encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toBe(path.join(work, 'proj.1'));
    } finally {
      rmrf(work);
    }
  });
});

describe('arb fork: failures leave nothing behind', () => {
  itIf(Boolean(env.user && env.userWork), env.userMissing)('as a user, refuses to fork where it cannot write (EACCES), and makes nothing', () => {
    const user = env.user!;
    const locked = fs.mkdtempSync(path.join(env.userWork!, 'locked-'));
    try {
      // A parent the user cannot write to, holding a project the user owns.
      fs.chmodSync(locked, 0o755);
      const proj = path.join(locked, 'proj');
      write(path.join(proj, 'a.txt'), 'a\n');
      execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, proj]);
      const r = arbAsUser(['fork', '--print'], { cwd: proj });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/arb fork: cannot make '.*proj\.1': permission denied \(EACCES\): the fork is made beside the directory/);
      expect(fs.readdirSync(locked)).toEqual(['proj']);
      // The pair: where the user can write, the same fork works.
      const ok = arbAsUser(['fork', '--print', proj, path.join(env.userWork!, `${path.basename(locked)}-dest`)]);
      expect(ok.status).toBe(0);
      expect(fs.readFileSync(path.join(ok.stdout.trim(), 'a.txt'), 'utf8')).toBe('a\n');
      rmrf(ok.stdout.trim());
      rmrf(path.join(env.userWork!, `.${path.basename(locked)}-dest.base`));
    } finally {
      rmrf(locked);
    }
  });

  itIf(process.getuid?.() === 0, 'mounting a small tmpfs needs root')('removes the half-made fork and base when the disk fills (ENOSPC)', () => {
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt]);
    try {
      const dir = path.join(mnt, 'proj');
      for (let i = 0; i < 6; i++) write(path.join(dir, `f${i}`), Buffer.alloc(200 * 1024, i + 1));
      write(path.join(dir, 'sub/small.txt'), 'small\n');
      const before = snapshot(dir, true);
      const r = arb(['fork', '--print'], { cwd: dir });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/arb fork: cannot fork '.*proj' to '.*proj\.1': no space left on device \(ENOSPC\) .*; removed the half-made fork and base: free some space/);
      expect(fs.readdirSync(mnt)).toEqual(['proj']);
      expect(entries(snapshot(dir, true))).toEqual(entries(before));
    } finally {
      spawnSync('umount', ['-l', mnt]);
      fs.rmdirSync(mnt);
    }
  });
});
