// arb diff on the changes a new user makes that the main tests do not: each must give a patch
// that `git apply` takes in the directory and that brings it to the fork's state.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { arb, tempDir } from '../helpers/run';
import { arbDiffBytes, git, gitApply, snapshot, write } from './helpers';

let work: string;
beforeEach(() => {
  work = tempDir('arb-diff-torture-');
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

function forkOf(dir: string): string {
  const r = arb(['fork', '--print', dir]);
  expect(r.status).toBe(0);
  return r.stdout.trim();
}

describe('arb diff | git apply', () => {
  it('applies when a link is renamed away and a directory takes its name', () => {
    // git prints a rename at its new name, after `dirlink/d.txt`: git apply then refuses the
    // file as "beyond a symbolic link" the patch has not removed yet.
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'src/a.txt'), 'a\n');
    fs.symlinkSync('src', path.join(dir, 'dirlink'));
    git(dir, ['init', '-q']);
    const fork = forkOf(dir);
    fs.renameSync(path.join(fork, 'dirlink'), path.join(fork, 'other'));
    write(path.join(fork, 'dirlink/d.txt'), 'a directory where the link was\n');

    const r = arbDiffBytes([fork]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    const applied = gitApply(dir, r.stdout);
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);
    expect(snapshot(dir)).toEqual(snapshot(fork));
    expect(snapshot(dir)).toMatchObject({ other: 'link src', 'dirlink/d.txt': 'file - a directory where the link was\n' });
  });

  it('still finds renames when no link is in a new directory’s way', () => {
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'long.txt'), 'a line long enough to be found renamed\n'.repeat(10));
    fs.symlinkSync('long.txt', path.join(dir, 'link'));
    git(dir, ['init', '-q']);
    const fork = forkOf(dir);
    fs.renameSync(path.join(fork, 'long.txt'), path.join(fork, 'moved.txt'));
    fs.rmSync(path.join(fork, 'link'));
    write(path.join(fork, 'link'), 'a file where the link was\n');

    const r = arbDiffBytes([fork]);
    expect(r.status).toBe(1);
    expect(r.stdout.toString()).toContain('rename from long.txt\nrename to moved.txt\n');
    expect(gitApply(dir, r.stdout).status).toBe(0);
    expect(snapshot(dir)).toEqual(snapshot(fork));
  });
});
