// arb fork --prune: removes exactly the unchanged, merged and orphaned ones left alone for an
// hour, and keeps every file that exists only in a fork. The hour is counted from a `now` given to
// the library call (forks made by the test are minutes old; times inside are set with touch -d).
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { KeptReason, pruneForks, runPrune } from '../../src/fork/prune';
import { CLI, testEnv, itIf } from '../helpers/env';
import { arb, asUser, tempDir } from '../helpers/run';
import { forkOf, makeSmallRepo } from './fixtures';
import { gitApply, snapshot, write } from '../diff/helpers';

const env = testEnv();
const HOUR = 3_600_000;
/** Two hours from now: every fork the test just made has been left alone for an hour then. */
const later = () => Date.now() + 2 * HOUR;

let work: string;
beforeEach(() => {
  work = tempDir('arb-prune-');
});
afterEach(() => {
  execFileSync('rm', ['-rf', '--', work]);
});

const makeRepo = (dir: string) => makeSmallRepo(dir, 'node_modules/\n');

const baseOf = (fork: string) => path.join(path.dirname(fork), `.${path.basename(fork)}.base`);
const exists = (p: string) => {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
/** Sets the modification time of `file` to `ms`. */
const touchAt = (file: string, ms: number) => execFileSync('touch', ['-h', '-d', `@${(ms / 1000).toFixed(3)}`, file]);
const reasons = (kept: { entry: { name: string }; reason: KeptReason }[]) => kept.map((k) => [k.entry.name, k.reason]);

describe('pruneForks', () => {
  it('removes unchanged and merged forks with their bases, and bases left over; keeps files only here', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const unchanged = forkOf(dir);
    const onlyHere = forkOf(dir);
    const merged = forkOf(dir);
    const orphan = forkOf(dir, 'gone');
    fs.appendFileSync(path.join(onlyHere, 'a.txt'), 'work not brought back\n');
    write(path.join(merged, 'new.c'), 'brought back\n');
    expect(gitApply(dir, arb(['diff', merged]).stdout).status).toBe(0);
    execFileSync('rm', ['-rf', orphan]); // a fork removed by hand
    write(path.join(unchanged, 'node_modules/x.js'), 'ignored: does not count\n');
    const home = snapshot(dir);

    const r = await pruneForks(dir, { now: later() });
    expect(r.removed).toEqual([unchanged, baseOf(unchanged), merged, baseOf(merged), baseOf(orphan)]);
    expect(reasons(r.kept)).toEqual([['2', 'only-here']]);
    expect(r.failed).toEqual([]);
    for (const p of r.removed) expect(exists(p)).toBe(false);
    expect(fs.readFileSync(path.join(onlyHere, 'a.txt'), 'utf8')).toBe('a\nwork not brought back\n');
    expect(exists(baseOf(onlyHere))).toBe(true);
    expect(snapshot(dir)).toEqual(home);
    expect(fs.readdirSync(work).sort()).toEqual(['.proj.2.base', 'proj', 'proj.2']);
  });

  it('keeps what changed in the last hour, and removes it once an hour has gone by', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    const now = later();
    touchAt(path.join(fork, 'src/b.c'), now - 59 * 60_000);
    let r = await pruneForks(dir, { now });
    expect(r.removed).toEqual([]);
    expect(reasons(r.kept)).toEqual([['1', 'recent']]);
    // An ignored file counts too: the fork was not left alone.
    touchAt(path.join(fork, 'src/b.c'), now - 61 * 60_000);
    write(path.join(fork, 'node_modules/pkg/i.js'), 'x\n');
    touchAt(path.join(fork, 'node_modules/pkg/i.js'), now - 10 * 60_000);
    r = await pruneForks(dir, { now });
    expect(reasons(r.kept)).toEqual([['1', 'recent']]);
    touchAt(path.join(fork, 'node_modules/pkg/i.js'), now - 61 * 60_000);
    r = await pruneForks(dir, { now });
    expect(r.removed).toEqual([fork, baseOf(fork)]);
  });

  it('removes nothing with dryRun, and says what it would', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    const r = await pruneForks(dir, { now: later(), dryRun: true });
    expect(r.removed).toEqual([fork, baseOf(fork)]);
    expect(exists(fork) && exists(baseOf(fork))).toBe(true);
  });

  it('neither follows nor removes a link put where a fork was', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    const elsewhere = path.join(work, 'elsewhere');
    write(path.join(elsewhere, 'precious.txt'), 'not a fork\n');
    execFileSync('rm', ['-rf', fork]);
    fs.symlinkSync(elsewhere, fork);
    const r = await pruneForks(dir, { now: later() });
    expect(r.removed).toEqual([]);
    expect(reasons(r.kept)).toEqual([['1', 'not-a-directory']]);
    expect(fs.readlinkSync(fork)).toBe(elsewhere);
    expect(fs.readFileSync(path.join(elsewhere, 'precious.txt'), 'utf8')).toBe('not a fork\n');
    expect(exists(baseOf(fork))).toBe(true);
  });

  it('removes links inside a fork as links, never what they point to', async () => {
    const outside = path.join(work, 'outside');
    write(path.join(outside, 'precious.txt'), 'outside\n');
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    fs.symlinkSync(outside, path.join(dir, 'to-outside'));
    fs.symlinkSync(path.join(outside, 'precious.txt'), path.join(dir, 'to-file'));
    const unchanged = forkOf(dir);
    const merged = forkOf(dir);
    fs.symlinkSync(outside, path.join(merged, 'another-link'));
    fs.symlinkSync(outside, path.join(dir, 'another-link'));
    const r = await pruneForks(dir, { now: later() });
    expect(r.removed).toEqual([unchanged, baseOf(unchanged), merged, baseOf(merged)]);
    expect(fs.readdirSync(outside)).toEqual(['precious.txt']);
    expect(fs.readFileSync(path.join(outside, 'precious.txt'), 'utf8')).toBe('outside\n');
  });

  it('keeps a fork that changes while it is being examined', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    const r = await pruneForks(dir, {
      now: later(),
      onExamined: () => write(path.join(fork, 'late.txt'), 'written while prune looked\n'),
    });
    expect(r.removed).toEqual([]);
    expect(reasons(r.kept)).toEqual([['1', 'changed-while-pruning']]);
    expect(fs.readFileSync(path.join(fork, 'late.txt'), 'utf8')).toBe('written while prune looked\n');
  });

  it('keeps a merged fork whose directory moves on while it is being examined', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    write(path.join(fork, 'x.txt'), 'x\n');
    write(path.join(dir, 'x.txt'), 'x\n');
    const r = await pruneForks(dir, { now: later(), onExamined: () => fs.rmSync(path.join(dir, 'x.txt')) });
    expect(reasons(r.kept)).toEqual([['1', 'changed-while-pruning']]);
    expect(exists(path.join(fork, 'x.txt'))).toBe(true);
  });

  it('keeps a fork a process works in, whatever its age', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    const agent = spawn('sleep', ['60'], { cwd: path.join(fork, 'src'), stdio: 'ignore' });
    try {
      await new Promise((resolve) => agent.once('spawn', resolve));
      const r = await pruneForks(dir, { now: later() });
      expect(r.removed).toEqual([]);
      expect(reasons(r.kept)).toEqual([['1', 'in-use']]);
    } finally {
      agent.kill();
      await new Promise((resolve) => agent.once('exit', resolve));
    }
    expect((await pruneForks(dir, { now: later() })).removed).toEqual([fork, baseOf(fork)]);
  });

  it('leaves alone a fork whose base was removed by hand, the directory, and what is not its fork', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const noBase = forkOf(dir);
    execFileSync('rm', ['-rf', baseOf(noBase)]);
    fs.mkdirSync(path.join(work, 'proj.backup'));
    fs.mkdirSync(path.join(work, 'projx.1'));
    fs.mkdirSync(path.join(work, '.projx.1.base'));
    fs.mkdirSync(path.join(work, '.proj..base'));
    const before = fs.readdirSync(work).sort();
    const r = await pruneForks(dir, { now: later() });
    expect(r).toEqual({ removed: [], kept: [], failed: [] });
    expect(fs.readdirSync(work).sort()).toEqual(before);
    expect(exists(path.join(dir, 'a.txt'))).toBe(true);
  });

  it('handles names with spaces', async () => {
    const dir = path.join(work, 'my proj');
    makeRepo(dir);
    const a = forkOf(dir, 'first try');
    const b = forkOf(dir, 'second try');
    write(path.join(b, 'kept file.txt'), 'only here\n');
    const r = await pruneForks(dir, { now: later() });
    expect(r.removed).toEqual([a, baseOf(a)]);
    expect(exists(path.join(b, 'kept file.txt'))).toBe(true);
  });

  itIf(!!env.user, env.userMissing)('removes, as the user, a fork holding directories without write permission', () => {
    const user = env.user!;
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    write(path.join(dir, 'ro/sub/f.txt'), 'read-only\n', 0o444);
    fs.chmodSync(path.join(dir, 'ro/sub'), 0o555);
    fs.chmodSync(path.join(dir, 'ro'), 0o555);
    fs.chmodSync(work, 0o755);
    execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, work]);
    const fork = asUser(process.execPath, [CLI, 'fork', '--print', dir]).stdout.trim();
    expect(fork).toBe(`${dir}.1`);
    const prune = path.join(path.dirname(CLI), 'fork', 'prune.js');
    const script = `require(${JSON.stringify(prune)}).pruneForks(process.argv[1], { now: Date.now() + 7200000 }).then((r) => console.log(JSON.stringify(r)))`;
    const r = asUser(process.execPath, ['-e', script, dir]);
    expect(r.stderr).toBe('');
    const result = JSON.parse(r.stdout);
    expect(result.failed).toEqual([]);
    expect(result.removed).toEqual([fork, baseOf(fork)]);
    expect(exists(fork) || exists(baseOf(fork))).toBe(false);
  });
});

describe('arb fork --prune', () => {
  it('prints each path removed, then how many it kept and why', async () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const a = forkOf(dir);
    const b = forkOf(dir);
    const c = forkOf(dir);
    write(path.join(b, 'x'), 'only here\n');
    const now = later();
    touchAt(path.join(c, 'a.txt'), now - 5 * 60_000);
    const out: string[] = [];
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(await runPrune(dir, false, (t) => out.push(t), () => undefined, now)).toBe(0);
    } finally {
      process.chdir(cwd);
    }
    expect(out.join('')).toBe(['removed ../proj.1', 'removed ../.proj.1.base', 'kept 2: 1 with files only here, 1 changed 5 minutes ago', ''].join('\n'));
    expect(exists(a)).toBe(false);
  });

  it('removes exactly the unchanged, merged and orphaned ones whose times say an hour has gone by', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const unchanged = forkOf(dir);
    const onlyHere = forkOf(dir);
    const merged = forkOf(dir);
    const recent = forkOf(dir);
    const orphan = forkOf(dir, 'orphan');
    write(path.join(onlyHere, 'src/only-here.c'), 'work not brought back\n');
    fs.appendFileSync(path.join(merged, 'a.txt'), 'brought back\n');
    expect(gitApply(dir, arb(['diff', merged]).stdout).status).toBe(0);
    execFileSync('rm', ['-rf', orphan]);
    // Two hours old, all of it, as touch -d makes it; one file of one fork five minutes old.
    const forks = fs.readdirSync(work).filter((n) => n !== 'proj').map((n) => path.join(work, n));
    execFileSync('find', [...forks, '-exec', 'touch', '-h', '-d', '2 hours ago', '{}', '+']);
    execFileSync('touch', ['-d', '5 minutes ago', path.join(recent, 'a.txt')]);
    const home = snapshot(dir);

    const r = arb(['fork', '--prune'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      [
        'removed ../proj.1',
        'removed ../.proj.1.base',
        'removed ../proj.3',
        'removed ../.proj.3.base',
        'removed ../.proj.orphan.base',
        'kept 2: 1 with files only here, 1 changed 5 minutes ago',
        '',
      ].join('\n'),
    );
    expect(fs.readdirSync(work).sort()).toEqual(['.proj.2.base', '.proj.4.base', 'proj', 'proj.2', 'proj.4']);
    expect(fs.readFileSync(path.join(onlyHere, 'src/only-here.c'), 'utf8')).toBe('work not brought back\n');
    expect(snapshot(dir)).toEqual(home);
    expect(unchanged).toBe(path.join(work, 'proj.1'));
  });

  it('says with --dry-run what it would remove, and removes nothing', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    execFileSync('find', [fork, baseOf(fork), '-exec', 'touch', '-h', '-d', '3 hours ago', '{}', '+']);
    const r = arb(['fork', '--prune', '--dry-run', dir], { cwd: work });
    expect(r).toMatchObject({ status: 0, stderr: '', stdout: 'would remove proj.1\nwould remove .proj.1.base\nkept 0\n' });
    expect(exists(fork) && exists(baseOf(fork))).toBe(true);
  });

  it('keeps forks made in the last hour, and says so', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const a = forkOf(dir);
    const b = forkOf(dir);
    write(path.join(b, 'x'), 'only here\n');
    for (const args of [['--prune', '--dry-run'], ['--prune']]) {
      const r = arb(['fork', ...args], { cwd: dir });
      expect(r).toMatchObject({ status: 0, stderr: '', stdout: 'kept 2: 1 with files only here, 1 changed just now\n' });
    }
    expect(exists(a) && exists(b)).toBe(true);
  });

  it('takes DIR, and prints kept 0 when there is nothing', () => {
    const dir = path.join(work, 'empty');
    fs.mkdirSync(dir);
    expect(arb(['fork', '--prune', dir])).toMatchObject({ status: 0, stdout: 'kept 0\n', stderr: '' });
  });

  it('refuses options that do not go with --prune', () => {
    expect(arb(['fork', '--prune', '--json']).stderr).toMatch(/--json goes with -l/);
    expect(arb(['fork', '--dry-run']).stderr).toMatch(/--dry-run goes with --prune/);
    expect(arb(['fork', '--prune', '--print']).status).toBe(2);
    expect(arb(['fork', '--prune', '--no-ignore']).status).toBe(2);
  });
});
