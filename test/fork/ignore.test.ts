// What a fork leaves out, as git says in a private repository: only .gitignore files and a copy
// of the index count, and nothing in the directory's repository can make git run a program.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { findRepository, ignoredPathBuffers, ignoredPaths } from '../../src/fork/ignore';
import { arb, tempDir } from '../helpers/run';
import { git, makeRepo, rawPath, rmrf, write } from './fixtures';

const sorted = (a: string[]) => [...a].sort();

describe('ignoredPaths', () => {
  let work: string;
  let repo: string;
  beforeAll(() => {
    work = tempDir('arb-ignore-', '/var/tmp');
    repo = path.join(work, 'repo');
    makeRepo(repo);
  });
  afterAll(() => rmrf(work));

  it('lists what .gitignore files ignore and git does not track, directories collapsed', async () => {
    expect(sorted(await ignoredPaths(repo))).toEqual(['build/out.o', 'debug.log', 'dist/', 'node_modules/', 'src/a.tmp', 'src/deep/err.log', 'src/generated/']);
  });

  it('in a subdirectory, goes by the .gitignore files above it too', async () => {
    // *.log comes from the repository's top .gitignore.
    expect(sorted(await ignoredPaths(path.join(repo, 'src')))).toEqual(['a.tmp', 'deep/err.log', 'generated/']);
  });

  it('in a directory that is itself ignored, goes by its own .gitignore only', async () => {
    const pkg = path.join(repo, 'node_modules', 'pkg1');
    write(path.join(pkg, '.gitignore'), '*.cache\n');
    write(path.join(pkg, 'x.cache'), 'c\n');
    write(path.join(pkg, 'kept.log'), 'not ignored here: the top .gitignore does not apply\n');
    try {
      expect(await ignoredPaths(pkg)).toEqual(['x.cache']);
    } finally {
      for (const f of ['.gitignore', 'x.cache', 'kept.log']) fs.rmSync(path.join(pkg, f));
    }
  });

  it('outside any repository, goes by the directory\'s own .gitignore files', async () => {
    const dir = path.join(work, 'plain');
    write(path.join(dir, '.gitignore'), 'target/\n');
    write(path.join(dir, 'target/x'), 'x\n');
    write(path.join(dir, 'sub/.gitignore'), '*.o\n');
    write(path.join(dir, 'sub/a.o'), 'o\n');
    write(path.join(dir, 'sub/a.c'), 'c\n');
    expect(findRepository(dir)).toBeUndefined();
    expect(sorted(await ignoredPaths(dir))).toEqual(['sub/a.o', 'target/']);
  });

  it('reads neither .git/info/exclude nor core.excludesFile', async () => {
    const dir = path.join(work, 'excludes');
    fs.mkdirSync(dir);
    git(dir, ['init', '-q']);
    write(path.join(dir, '.gitignore'), '*.o\n');
    write(path.join(dir, 'a.o'), 'o\n');
    write(path.join(dir, 'notes.txt'), 'n\n');
    write(path.join(dir, 'todo.txt'), 't\n');
    fs.appendFileSync(path.join(dir, '.git/info/exclude'), 'notes.txt\n');
    write(path.join(work, 'global-excludes'), 'todo.txt\n');
    git(dir, ['config', 'core.excludesFile', path.join(work, 'global-excludes')]);
    // The pair: git itself, in the repository, leaves both out.
    expect(git(dir, ['status', '--porcelain', '--untracked-files=all'])).toBe('?? .gitignore\n');
    expect(await ignoredPaths(dir)).toEqual(['a.o']);
  });

  it('keeps names that are not UTF-8 byte for byte', async () => {
    const dir = path.join(work, 'bytes');
    fs.mkdirSync(dir);
    write(path.join(dir, '.gitignore'), '*.o\n');
    fs.writeFileSync(rawPath(dir, 0xff, 0x2e, 0x6f), 'o\n');
    const [p] = await ignoredPathBuffers(dir);
    expect([...p]).toEqual([0xff, 0x2e, 0x6f]);
  });

  it('keeps tracked files with a split index', async () => {
    const dir = path.join(work, 'split');
    fs.mkdirSync(dir);
    git(dir, ['init', '-q']);
    write(path.join(dir, '.gitignore'), '*.log\n');
    write(path.join(dir, 'tracked.log'), 't\n');
    write(path.join(dir, 'other.log'), 'o\n');
    git(dir, ['add', '.gitignore']);
    git(dir, ['update-index', '--split-index']);
    git(dir, ['add', '-f', 'tracked.log']); // recorded in the split part
    git(dir, ['update-index', '--split-index']);
    expect(fs.readdirSync(path.join(dir, '.git')).some((n) => n.startsWith('sharedindex.'))).toBe(true);
    expect(await ignoredPaths(dir)).toEqual(['other.log']);
  });

  it('keeps tracked files with a sparse index, reading its trees from the repository', async () => {
    const dir = path.join(work, 'sparse');
    fs.mkdirSync(dir);
    git(dir, ['init', '-q']);
    write(path.join(dir, '.gitignore'), '*.log\n');
    write(path.join(dir, 'in/a.txt'), 'a\n');
    write(path.join(dir, 'out/tracked.log'), 't\n');
    git(dir, ['add', '.gitignore', 'in']);
    git(dir, ['add', '-f', 'out/tracked.log']);
    git(dir, ['commit', '-q', '-m', 'x']);
    git(dir, ['sparse-checkout', 'init', '--cone', '--sparse-index']);
    git(dir, ['sparse-checkout', 'set', 'in']);
    // The index holds out/ as one sparse directory entry, not its files.
    expect(git(dir, ['ls-files', '--sparse'])).toContain('out/\n');
    // Files outside the cone, present anyway: a tracked one that matches *.log, and another.
    write(path.join(dir, 'out/tracked.log'), 't\n');
    write(path.join(dir, 'out/other.log'), 'o\n');
    expect(await ignoredPaths(dir)).toEqual(['out/other.log']);
  });

  it('uses the index of a worktree (a .git file)', async () => {
    const main = path.join(work, 'wt-main');
    fs.mkdirSync(main);
    git(main, ['init', '-q', '-b', 'main']);
    write(path.join(main, '.gitignore'), '*.log\n');
    git(main, ['add', '.gitignore']);
    git(main, ['commit', '-q', '-m', 'x']);
    const wt = path.join(work, 'wt');
    git(main, ['worktree', 'add', '-q', '-b', 'wt', wt]);
    write(path.join(wt, 'tracked.log'), 't\n');
    git(wt, ['add', '-f', 'tracked.log']);
    write(path.join(wt, 'other.log'), 'o\n');
    expect(findRepository(wt)?.gitDir).toBe(path.join(main, '.git', 'worktrees', 'wt'));
    expect(await ignoredPaths(wt)).toEqual(['other.log']);
  });

  it('rejects when the index is corrupt', async () => {
    const dir = path.join(work, 'corrupt');
    fs.mkdirSync(dir);
    git(dir, ['init', '-q']);
    write(path.join(dir, '.gitignore'), '*.o\n');
    fs.writeFileSync(path.join(dir, '.git/index'), 'DIRC garbage');
    await expect(ignoredPaths(dir)).rejects.toThrow(/index/);
  });
});

describe('arb fork never runs what the directory\'s repository names', () => {
  it('runs no core.fsmonitor, no core.hooksPath hook and no .git/hooks hook', () => {
    const work = tempDir('arb-hostile-', '/var/tmp');
    try {
      const repo = path.join(work, 'repo');
      makeRepo(repo);
      const marker = path.join(work, 'MARKER');
      const script = (tag: string) => `#!/bin/sh\necho ${tag} >> ${marker}\n`;
      write(path.join(work, 'fsmonitor'), script('fsmonitor'), 0o755);
      for (const hook of ['post-index-change', 'pre-commit', 'post-checkout', 'reference-transaction']) {
        write(path.join(work, 'hooks', hook), script(`hooksPath-${hook}`), 0o755);
        write(path.join(repo, '.git/hooks', hook), script(`hook-${hook}`), 0o755);
      }
      git(repo, ['config', 'core.fsmonitor', path.join(work, 'fsmonitor')]);
      git(repo, ['config', 'core.hooksPath', path.join(work, 'hooks')]);
      git(repo, ['config', 'core.untrackedCache', 'true']);

      // The pair: git run in the repository itself does run them.
      const control = path.join(work, 'control');
      execFileSync('cp', ['-a', repo, control]);
      git(control, ['status', '--porcelain']);
      git(control, ['commit', '-q', '--allow-empty', '-m', 'x']);
      const ran = fs.readFileSync(marker, 'utf8');
      expect(ran).toContain('fsmonitor');
      expect(ran).toContain('hooksPath-pre-commit');
      fs.rmSync(marker);

      const r = arb(['fork', '--print'], { cwd: repo });
      expect(r.status).toBe(0);
      expect(r.stderr).not.toContain('warning');
      expect(fs.existsSync(path.join(r.stdout.trim(), 'node_modules'))).toBe(false); // git was asked
      expect(fs.existsSync(marker)).toBe(false);
      const sub = arb(['fork', '--print', path.join(repo, 'src')]);
      expect(sub.status).toBe(0);
      expect(fs.existsSync(path.join(sub.stdout.trim(), 'generated'))).toBe(false);
      expect(fs.existsSync(marker)).toBe(false);
    } finally {
      rmrf(work);
    }
  });
});
