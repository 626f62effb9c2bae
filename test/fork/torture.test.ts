// arb fork --prune where a new user can lose work: forks aged as the issue checks them, with
// `find … -exec touch -h -d '2 hours ago'` over the forks and their bases alike.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { arb, tempDir } from '../helpers/run';
import { git, write } from '../diff/helpers';

let work: string;
beforeEach(() => {
  work = tempDir('arb-fork-torture-');
});
afterEach(() => {
  execFileSync('rm', ['-rf', '--', work]);
});

function forkOf(dir: string, name: string): string {
  const r = arb(['fork', '--print', '-n', name, dir]);
  expect(r.status).toBe(0);
  return r.stdout.trim();
}

/** Every fork and base of proj, and all inside them, last changed two hours ago. */
function ageAll(): void {
  const all = fs.readdirSync(work).filter((n) => n !== 'proj').map((n) => path.join(work, n));
  execFileSync('find', [...all, '-exec', 'touch', '-h', '-d', '2 hours ago', '{}', '+']);
}

describe('arb fork --prune after aging forks and bases together', () => {
  it('keeps a fork whose only change kept the file’s size, and says so with --dry-run too', () => {
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'a.txt'), 'hello\n');
    git(dir, ['init', '-q']);
    const same = forkOf(dir, 'same');
    const unchanged = forkOf(dir, 'unchanged');
    fs.writeFileSync(path.join(same, 'a.txt'), 'HELLO\n');
    ageAll();

    const dry = arb(['fork', '--prune', '--dry-run', dir], { cwd: work });
    expect(dry.stdout).toBe('would remove proj.unchanged\nwould remove .proj.unchanged.base\nkept 1: 1 with files only here\n');
    const r = arb(['fork', '--prune', dir], { cwd: work });
    expect(r.stdout).toBe('removed proj.unchanged\nremoved .proj.unchanged.base\nkept 1: 1 with files only here\n');
    expect(r.status).toBe(0);
    expect(fs.readFileSync(path.join(same, 'a.txt'), 'utf8')).toBe('HELLO\n');
    expect(fs.existsSync(unchanged)).toBe(false);
    expect(fs.readdirSync(work).sort()).toEqual(['.proj.same.base', 'proj', 'proj.same']);
  });
});
