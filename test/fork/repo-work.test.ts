// Work that lives only in a fork's repository (issue 16): a fork whose work tree is back to its
// base but whose .git holds commits or branches the directory's repository does not have is not
// "unchanged": -l says what is there, and --prune keeps it. The fork's repository is read as
// data (refs, packed-refs, objects), never by running git in it with its configuration.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { pruneForks } from '../../src/fork/prune';
import { listForks, statusText } from '../../src/fork/list';
import { arb, tempDir } from '../helpers/run';
import { forkOf, git, makeSmallRepo, write } from './fixtures';

const HOUR = 3_600_000;
const later = () => Date.now() + 2 * HOUR;

let work: string;
beforeEach(() => {
  work = tempDir('arb-repo-work-');
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

function setUp(): { dir: string; fork: string } {
  const dir = path.join(work, 'proj');
  makeSmallRepo(dir, 'node_modules/\n');
  return { dir, fork: forkOf(dir) };
}

/** Two commits in the fork, the work tree left as its base has it. */
function commitTwice(fork: string): void {
  write(path.join(fork, 'a.txt'), 'changed\n');
  git(fork, ['commit', '-qam', 'one']);
  write(path.join(fork, 'a.txt'), 'a\n');
  git(fork, ['commit', '-qam', 'two']);
}

describe('commits and branches only in a fork', () => {
  test('commits: -l shows them and --prune keeps the fork', async () => {
    const { dir, fork } = setUp();
    commitTwice(fork);
    const [entry] = await listForks(dir);
    expect(entry.changed).toBe(0);
    expect(entry.commits).toBe(2);
    expect(statusText(entry)).toBe('2 commits only here');
    const r = await pruneForks(dir, { now: later() });
    expect(r.removed).toEqual([]);
    expect(r.kept.map((k) => k.reason)).toEqual(['commits-only-here']);
    expect(fs.existsSync(path.join(fork, '.git'))).toBe(true);
    const table = arb(['fork', '-l'], { cwd: dir });
    expect(table.stdout).toMatch(/proj\.1 +just now +2 commits only here\n/);
  });

  test('a branch only there', async () => {
    const { dir, fork } = setUp();
    git(fork, ['branch', 'feature']);
    const [entry] = await listForks(dir);
    expect(statusText(entry)).toBe('1 branch only here');
    expect((await pruneForks(dir, { now: later() })).removed).toEqual([]);
  });

  test('refs in packed-refs and objects in packs count the same', async () => {
    const { dir, fork } = setUp();
    commitTwice(fork);
    git(fork, ['branch', 'feature']);
    git(fork, ['gc', '-q']);
    expect(fs.existsSync(path.join(fork, '.git', 'packed-refs'))).toBe(true);
    expect(fs.existsSync(path.join(fork, '.git', 'refs', 'heads', 'feature'))).toBe(false);
    const [entry] = await listForks(dir);
    expect(statusText(entry)).toBe('2 commits, 1 branch only here');
  });

  test('with files only here too, both are said', async () => {
    const { dir, fork } = setUp();
    commitTwice(fork);
    write(path.join(fork, 'new.txt'), 'x\n');
    const [entry] = await listForks(dir);
    expect(statusText(entry)).toBe('1 file, 2 commits only here');
  });

  test('commits the directory fetched are not only there: the fork goes', async () => {
    const { dir, fork } = setUp();
    commitTwice(fork);
    const branch = git(fork, ['rev-parse', '--abbrev-ref', 'HEAD']).trim();
    git(dir, ['fetch', '-q', fork, `${branch}:${branch}-from-fork`]);
    git(dir, ['merge', '-q', '--ff-only', `${branch}-from-fork`]);
    const [entry] = await listForks(dir);
    expect(statusText(entry)).toBe('unchanged');
    const r = await pruneForks(dir, { now: later() });
    expect(r.removed).toEqual([fork, path.join(work, '.proj.1.base')]);
  });

  test('nothing configured in the fork runs', async () => {
    const { dir, fork } = setUp();
    commitTwice(fork);
    const marker = path.join(work, 'ran');
    const hook = path.join(work, 'hook.sh');
    write(hook, `#!/bin/sh\ntouch ${marker}\n`, 0o755);
    fs.appendFileSync(path.join(fork, '.git', 'config'), `[core]\n\tfsmonitor = ${hook}\n\thooksPath = ${work}\n[alias]\n\trev-list = !${hook}\n`);
    write(path.join(fork, '.git', 'objects', 'info', 'alternates'), `${work}/nowhere\n`);
    const [entry] = await listForks(dir);
    expect(entry.commits).toBe(2);
    expect(fs.existsSync(marker)).toBe(false);
  });

  test('an unchanged fork with its repository as it was goes', async () => {
    const { dir, fork } = setUp();
    const [entry] = await listForks(dir);
    expect(statusText(entry)).toBe('unchanged');
    expect((await pruneForks(dir, { now: later() })).removed).toEqual([fork, path.join(work, '.proj.1.base')]);
  });
});
