// arb fork -l: each status as a user makes it (forks left unchanged, changed, changed and applied
// with arb diff | git apply, and with their fork or base deleted), names with spaces, a link where
// a fork was, --json.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ForkEntry, formatTable, timeAgo } from '../../src/fork/list';
import { arb, tempDir } from '../helpers/run';
import { forkOf, makeSmallRepo } from './fixtures';
import { git, gitApply, write } from '../diff/helpers';

let work: string;
beforeEach(() => {
  work = tempDir('arb-list-');
});
afterEach(() => {
  execFileSync('rm', ['-rf', '--', work]);
});

const makeRepo = (dir: string) => makeSmallRepo(dir, 'node_modules/\n*.log\n');

/** The table's rows, split on two or more spaces. */
function rows(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/ {2,}/));
}

describe('arb fork -l', () => {
  it('shows each status: unchanged, files only here, merged, base only', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const unchanged = forkOf(dir);
    const changed = forkOf(dir);
    const merged = forkOf(dir);
    const orphan = forkOf(dir, 'gone');
    // Changed: three files differ from the base, none of them in the directory.
    fs.appendFileSync(path.join(changed, 'a.txt'), 'more\n');
    write(path.join(changed, 'new.txt'), 'new\n');
    fs.rmSync(path.join(changed, 'src/b.c'));
    // What does not count: ignored files, .git.
    write(path.join(unchanged, 'node_modules/x.js'), 'x\n');
    write(path.join(unchanged, 'debug.log'), 'log\n');
    // (A commit in the fork does count: test/fork/repo-work.test.ts.)
    // Merged: changed, then its patch applied in the directory.
    fs.appendFileSync(path.join(merged, 'src/b.c'), 'merged\n');
    write(path.join(merged, 'added.txt'), 'added\n');
    const patch = arb(['diff', merged]);
    expect(patch.status).toBe(1);
    expect(gitApply(dir, patch.stdout).status).toBe(0);
    // Base only: its fork removed by hand.
    fs.rmSync(orphan, { recursive: true });

    const r = arb(['fork', '-l'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(rows(r.stdout)).toEqual([
      ['FORK', 'UPDATED', 'STATUS'],
      ['../proj.1', 'just now', 'unchanged'],
      ['../proj.2', 'just now', '3 files only here'],
      ['../proj.3', 'just now', 'merged'],
      ['../.proj.gone.base', 'just now', 'base only'],
    ]);
    // Once the directory moves on, the applied fork's files are no longer the same there.
    fs.appendFileSync(path.join(dir, 'added.txt'), 'edited at home\n');
    expect(rows(arb(['fork', '-l'], { cwd: dir }).stdout)[3]).toEqual(['../proj.3', 'just now', '1 file only here']);
  });

  it('lists the forks of DIR relative to the working directory, and nothing that is not a fork', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    forkOf(dir);
    const noBase = forkOf(dir);
    fs.rmSync(`${path.dirname(noBase)}/.${path.basename(noBase)}.base`, { recursive: true });
    fs.mkdirSync(path.join(work, 'proj.backup')); // the user's own, no base: not a fork
    fs.mkdirSync(path.join(work, 'projx.1'));
    fs.mkdirSync(path.join(work, '.projx.1.base'));
    const r = arb(['fork', '-l', 'proj'], { cwd: work });
    expect(r.status).toBe(0);
    expect(rows(r.stdout).map((row) => row[0])).toEqual(['FORK', 'proj.1']);
  });

  it('prints only the header when there are no forks', () => {
    const dir = path.join(work, 'lonely');
    fs.mkdirSync(dir);
    const r = arb(['fork', '-l', dir]);
    expect(r).toMatchObject({ status: 0, stdout: 'FORK  UPDATED  STATUS\n', stderr: '' });
    expect(arb(['fork', '-l', '--json', dir])).toMatchObject({ status: 0, stdout: '[]\n' });
  });

  it('handles names with spaces', () => {
    const dir = path.join(work, 'my project');
    makeRepo(dir);
    const fork = forkOf(dir, 'try it');
    expect(fork).toBe(path.join(work, 'my project.try it'));
    fs.appendFileSync(path.join(fork, 'a.txt'), 'x\n');
    const r = arb(['fork', '-l'], { cwd: dir });
    expect(rows(r.stdout)[1]).toEqual(['../my project.try it', 'just now', '1 file only here']);
  });

  it('neither follows nor counts a link put where a fork was', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    const elsewhere = path.join(work, 'elsewhere');
    write(path.join(elsewhere, 'other.txt'), 'not a fork\n');
    execFileSync('rm', ['-rf', fork]);
    fs.symlinkSync(elsewhere, fork);
    const r = arb(['fork', '-l', '--json', dir]);
    expect(r.status).toBe(0);
    const [entry] = JSON.parse(r.stdout);
    expect(entry).toMatchObject({ path: fork, status: 'not-a-directory', count: 0 });
    expect(rows(arb(['fork', '-l', dir], { cwd: work }).stdout)[1]).toEqual(['proj.1', 'just now', 'not a directory']);
  });

  it('prints JSON: path, base, updated (ISO 8601), status, count', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const a = forkOf(dir);
    const b = forkOf(dir, 'named');
    write(path.join(b, 'x'), 'x\n');
    write(path.join(b, 'y'), 'y\n');
    const before = Date.now();
    const r = arb(['fork', '-l', '--json'], { cwd: dir });
    expect(r.status).toBe(0);
    const list = JSON.parse(r.stdout);
    expect(list).toEqual([
      { name: '1', path: a, base: path.join(work, '.proj.1.base'), updated: expect.any(String), status: 'unchanged', count: 0, changed: 0, commits: 0, branches: [], tags: [] },
      { name: 'named', path: b, base: path.join(work, '.proj.named.base'), updated: expect.any(String), status: 'only-here', count: 2, changed: 2, commits: 0, branches: [], tags: [] },
    ]);
    for (const e of list) {
      expect(e.updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Math.abs(Date.parse(e.updated) - before)).toBeLessThan(60_000);
    }
  });

  it('says UPDATED from the newest change inside the fork', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = forkOf(dir);
    // A modification time ahead of the clock, deep in an ignored directory.
    write(path.join(fork, 'node_modules/deep/x.js'), 'x\n');
    execFileSync('touch', ['-d', '@4102444800', path.join(fork, 'node_modules/deep/x.js')]); // 2100-01-01
    const [entry] = JSON.parse(arb(['fork', '-l', '--json', dir]).stdout);
    expect(entry.updated).toBe('2100-01-01T00:00:00.000Z');
    expect(entry.status).toBe('unchanged');
  });

  it('refuses options that do not go with -l', () => {
    expect(arb(['fork', '-l', '--prune']).stderr).toMatch(/either -l or --prune/);
    expect(arb(['fork', '-l', '-n', 'x']).status).toBe(2);
    expect(arb(['fork', '--json']).stderr).toMatch(/--json goes with -l/);
    expect(arb(['fork', '-l', '--dry-run']).stderr).toMatch(/--dry-run goes with --prune/);
  });
});

describe('timeAgo', () => {
  const now = Date.parse('2026-01-10T12:00:00Z');
  it.each([
    [0, 'just now'],
    [-5_000, 'just now'],
    [30_000, '30 seconds ago'],
    [60_000, '1 minute ago'],
    [9 * 60_000 + 59_000, '9 minutes ago'],
    [2 * 3_600_000, '2 hours ago'],
    [86_400_000, '1 day ago'],
    [4 * 86_400_000, '4 days ago'],
    [90 * 86_400_000, '3 months ago'],
    [800 * 86_400_000, '2 years ago'],
  ])('%d ms before is %s', (ago, text) => {
    expect(timeAgo(now - ago, now)).toBe(text);
  });
});

describe('formatTable', () => {
  it('aligns the columns, with FORK relative to the working directory', () => {
    const now = Date.parse('2026-01-10T12:00:00Z');
    const e = (name: string, status: ForkEntry['status'], count: number, agoMs: number, fork = true): ForkEntry => ({
      name,
      fork: fork ? `/src/turso.${name}` : undefined,
      base: `/src/.turso.${name}.base`,
      status,
      count,
      changed: count,
      updatedMs: now - agoMs,
      commits: 0,
      branches: [],
      tags: [],
    });
    const table = formatTable(
      [e('1', 'unchanged', 0, 4 * 86_400_000), e('3', 'only-here', 9, 86_400_000), e('2', 'base-only', 0, 2 * 3_600_000, false), e('swebench', 'merged', 0, 9 * 60_000)],
      '/src/turso',
      now,
    );
    expect(table.split('\n')).toEqual([
      'FORK               UPDATED        STATUS',
      '../turso.1         4 days ago     unchanged',
      '../turso.3         1 day ago      9 files only here',
      '../.turso.2.base   2 hours ago    base only',
      '../turso.swebench  9 minutes ago  merged',
      '',
    ]);
  });
});
