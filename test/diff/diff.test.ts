// arb diff as a user runs it: fork, change the fork, `arb diff FORK | git apply` in the directory
// must bring it to the fork's state; nothing planted in either repository runs; links are never
// followed; bad input exits 2 with a message and nothing on stdout.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { CLI, testEnv, itIf } from '../helpers/env';
import { arb, arbAsUser, tempDir } from '../helpers/run';
import { arbDiffBytes, cpFork, git, gitApply, raw, snapshot, write } from './helpers';

const env = testEnv();

let work: string;
beforeEach(() => {
  work = tempDir('arb-diff-');
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

/** A repository with text, binary, executable, links, odd names, and what .gitignore ignores. */
function makeRepo(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  write(path.join(dir, '.gitignore'), 'node_modules/\n*.log\nbuild/\n');
  write(path.join(dir, 'README.md'), '# demo\n\nline two\n');
  write(path.join(dir, 'src/main.c'), 'int main(void) { return 0; }\n');
  write(path.join(dir, 'src/util.c'), `${'/* a long file, so that a rename with an edit is found */\n'.repeat(20)}int util;\n`);
  write(path.join(dir, 'run.sh'), '#!/bin/sh\necho run\n', 0o755);
  write(path.join(dir, 'tool.sh'), '#!/bin/sh\necho tool\n', 0o755);
  write(path.join(dir, 'image.bin'), Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 9, 8, 7]));
  write(path.join(dir, 'with space.txt'), 'spaced\n');
  write(path.join(dir, 'olddir/a.txt'), 'a in a directory that becomes a file\n');
  write(path.join(dir, 'becomes-dir'), 'a file that becomes a directory\n');
  write(path.join(dir, 'gone.txt'), 'deleted in the fork\n');
  write(path.join(dir, 'tracked.log'), 'a tracked file that *.log matches\n');
  fs.symlinkSync('README.md', path.join(dir, 'link-retarget'));
  fs.symlinkSync('src', path.join(dir, 'link-removed'));
  write(path.join(dir, 'link-to-file'), 'a file that becomes a link\n');
  git(dir, ['add', '.']);
  git(dir, ['add', '-f', 'tracked.log']);
  git(dir, ['commit', '-qm', 'init']);
}

/** Every kind of change a patch can carry. */
function changeFork(fork: string): void {
  fs.appendFileSync(path.join(fork, 'README.md'), 'line three\n');
  write(path.join(fork, 'image.bin'), Buffer.from([9, 9, 0, 0xff, 0x80, 0, 1]));
  fs.chmodSync(path.join(fork, 'src/main.c'), 0o755);
  fs.chmodSync(path.join(fork, 'tool.sh'), 0o644);
  fs.renameSync(path.join(fork, 'src/util.c'), path.join(fork, 'src/renamed util.c'));
  fs.appendFileSync(path.join(fork, 'src/renamed util.c'), 'int more;\n');
  fs.renameSync(path.join(fork, 'with space.txt'), path.join(fork, 'still with space.txt'));
  fs.rmSync(path.join(fork, 'gone.txt'));
  write(path.join(fork, 'new/deep/dir/file.txt'), 'in new directories\n');
  write(path.join(fork, 'empty-new'), '');
  write(path.join(fork, 'naïve café.txt'), 'non-ASCII name\n');
  write(raw(fork, [0x62, 0x61, 0x64, 0xff, 0x2e, 0x74]), 'a name with byte 0xff\n');
  write(raw(fork, Buffer.from('new\nline')), 'a name with a newline\n');
  write(raw(fork, Buffer.from('quote"back\\slash')), 'quotes and backslashes\n');
  fs.rmSync(path.join(fork, 'olddir'), { recursive: true });
  write(path.join(fork, 'olddir'), 'now a file\n');
  fs.rmSync(path.join(fork, 'becomes-dir'));
  write(path.join(fork, 'becomes-dir/inside.txt'), 'now in a directory\n');
  fs.rmSync(path.join(fork, 'link-retarget'));
  fs.symlinkSync('src/main.c', path.join(fork, 'link-retarget'));
  fs.rmSync(path.join(fork, 'link-removed'));
  fs.symlinkSync('../elsewhere/not/there', path.join(fork, 'link-new-dangling'));
  fs.rmSync(path.join(fork, 'link-to-file'));
  fs.symlinkSync('README.md', path.join(fork, 'link-to-file'));
  fs.appendFileSync(path.join(fork, 'tracked.log'), 'changed\n');
}

/** `cp -a`, then the .git directories removed. */
function copyWithoutGit(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  execFileSync('cp', ['-a', '--', from, to]);
  execFileSync('find', [to, '-name', '.git', '-prune', '-exec', 'rm', '-rf', '{}', '+']);
}

/** What .gitignore leaves out of the comparison, in the tests' trees. */
const ignored = (rel: string) => rel === 'node_modules' || rel === 'build' || (rel.endsWith('.log') && rel !== 'tracked.log');

describe('arb diff FORK', () => {
  it('prints a patch that git apply takes in the directory, bringing every kind of change home', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const r0 = arb(['fork', '--print', dir]);
    expect(r0.stderr).toBe('');
    const fork = r0.stdout.trim();
    expect(fork).toBe(`${dir}.1`);
    changeFork(fork);
    // What the fork's build leaves, which .gitignore ignores: not in the patch.
    write(path.join(fork, 'node_modules/dep/index.js'), 'module.exports = 1;\n');
    write(path.join(fork, 'build/out.o'), 'object\n');
    write(path.join(fork, 'debug.log'), 'log\n');

    const r = arb(['diff', fork], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^diff --git /);
    expect(r.stdout).toContain('rename from src/util.c\nrename to src/renamed util.c\n');
    expect(r.stdout).toContain('GIT binary patch');
    expect(r.stdout).not.toMatch(/node_modules|out\.o|debug\.log/);

    const applied = gitApply(dir, arbDiffBytes([fork]).stdout);
    expect(applied.stderr).toBe('');
    expect(applied.status).toBe(0);
    expect(snapshot(dir, ignored)).toEqual(snapshot(fork, ignored));
    // The fork is unchanged by the diff, and so is its base.
    expect(snapshot(`${path.dirname(dir)}/.proj.1.base`)['README.md']).toBe('file - # demo\n\nline two\n');
  });

  itIf(!!env.xfs, env.xfsMissing)('works on a fork whose files share blocks with its base (XFS reflink)', () => {
    const xwork = tempDir('arb-diff-', env.xfs);
    try {
      const dir = path.join(xwork, 'proj');
      makeRepo(dir);
      const fork = arb(['fork', '--print', dir]).stdout.trim();
      expect(arb(['diff', fork])).toMatchObject({ status: 0, stdout: '', stderr: '' });
      changeFork(fork);
      const r = arbDiffBytes([fork]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(1);
      expect(gitApply(dir, r.stdout)).toEqual({ status: 0, stderr: '' });
      expect(snapshot(dir, ignored)).toEqual(snapshot(fork, ignored));
    } finally {
      execFileSync('rm', ['-rf', xwork]);
    }
  });

  it('is what fsdiff prints too', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    fs.appendFileSync(path.join(fork, 'README.md'), 'more\n');
    const a = arb(['diff', fork]);
    const b = arb([fork], {}, 'fsdiff');
    expect(a.status).toBe(1);
    expect(b.status).toBe(1);
    expect(b.stdout).toBe(a.stdout);
  });

  it('exits 0 and prints nothing for an unchanged fork, even one whose files were touched', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    let r = arb(['diff', fork]);
    expect(r).toMatchObject({ status: 0, stdout: '', stderr: '' });
    // Same content, new times and a mode git does not record (group write): nothing changed.
    fs.utimesSync(path.join(fork, 'README.md'), new Date(), new Date());
    fs.chmodSync(path.join(fork, 'src/main.c'), 0o664);
    write(path.join(fork, 'src/util.c'), fs.readFileSync(path.join(fork, 'src/util.c')));
    r = arb(['diff', fork]);
    expect(r).toMatchObject({ status: 0, stdout: '', stderr: '' });
  });

  it('does not read a file whose size, mode and time match its base, unless it changed since the fork', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const made = arb(['fork', '--print', dir]);
    expect(made.status).toBe(0);
    const fork = made.stdout.trim();
    const base = path.join(work, '.proj.1.base');
    // The base's copy rewritten, same size, its time set back: the fork's file has not changed
    // since the fork was made, so it is taken as unchanged without reading either (the shortcut).
    const inBase = path.join(base, 'README.md');
    fs.writeFileSync(inBase, fs.readFileSync(inBase, 'utf8').toUpperCase());
    execFileSync('touch', ['-r', path.join(fork, 'README.md'), inBase]);
    expect(arb(['diff', fork])).toMatchObject({ status: 0, stdout: '' });
    // The fork's copy rewritten the same way: its change time, which touch cannot set back, is
    // later than the fork, so it is read and found changed.
    const inFork = path.join(fork, 'src', 'main.c');
    const kept = fs.statSync(inFork);
    fs.writeFileSync(inFork, fs.readFileSync(inFork, 'utf8').toUpperCase());
    execFileSync('touch', ['-r', path.join(base, 'src', 'main.c'), inFork]);
    expect(fs.statSync(inFork)).toMatchObject({ size: kept.size, mtimeMs: kept.mtimeMs });
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('+INT MAIN');
    expect(r.stdout).not.toContain('README');
  });
});

describe('arb diff of a subdirectory of a repository', () => {
  it('names files from the top of the repository, so that git apply in the directory takes them', () => {
    const repo = path.join(work, 'mono');
    const dir = path.join(repo, 'packages', 'pkg.v2');
    write(path.join(dir, 'src/index.js'), 'one\n');
    write(path.join(repo, 'README.md'), 'top\n');
    git(repo, ['init', '-q']);
    git(repo, ['add', '.']);
    git(repo, ['commit', '-qm', 'init']);
    const fork = cpFork(dir);
    fs.appendFileSync(path.join(fork, 'src/index.js'), 'two\n');
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^diff --git a\/packages\/pkg\.v2\/src\/index\.js b\/packages\/pkg\.v2\/src\/index\.js\n/);
    // In the directory itself (git would silently skip paths that did not start from the top).
    expect(gitApply(dir, r.stdout)).toEqual({ status: 0, stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'src/index.js'), 'utf8')).toBe('one\ntwo\n');
    // And from the top.
    git(repo, ['checkout', '-q', '.']);
    expect(gitApply(repo, r.stdout)).toEqual({ status: 0, stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'src/index.js'), 'utf8')).toBe('one\ntwo\n');
  });

  it(".gitignore files above the directory count, as they did for it (node_modules at a monorepo's top)", () => {
    const repo = path.join(work, 'mono');
    const dir = path.join(repo, 'packages', 'lib');
    write(path.join(repo, '.gitignore'), 'node_modules/\n*.log\n');
    write(path.join(dir, '.gitignore'), 'dist/\n');
    write(path.join(dir, 'index.js'), 'one\n');
    git(repo, ['init', '-q']);
    git(repo, ['add', '.']);
    git(repo, ['commit', '-qm', 'init']);
    const made = arb(['fork', '--print', dir]);
    expect(made.status).toBe(0);
    const fork = made.stdout.trim();
    write(path.join(fork, 'node_modules/big/index.js'), 'installed by the agent\n');
    write(path.join(fork, 'debug.log'), 'a log\n');
    write(path.join(fork, 'dist/out.js'), 'built\n');
    write(path.join(fork, 'new.js'), 'new work\n');
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    const files = [...r.stdout.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['packages/lib/new.js']);
    const list = arb(['fork', '-l', '--json', dir]);
    expect(JSON.parse(list.stdout)).toMatchObject([{ status: 'only-here', count: 1 }]);
  });

  it('a directory the rules above ignore as a whole goes by its own .gitignore files', () => {
    const repo = path.join(work, 'mono');
    const dir = path.join(repo, 'vendor', 'lib');
    // `vendor/` ignores the directory, its fork and its base alike: were the rules above taken
    // for them, everything in the fork would be left out of its patch.
    write(path.join(repo, '.gitignore'), 'vendor/\n');
    write(path.join(dir, '.gitignore'), '*.tmp\n');
    write(path.join(dir, 'index.js'), 'one\n');
    git(repo, ['init', '-q']);
    const fork = cpFork(dir);
    write(path.join(fork, 'scratch.tmp'), 'ignored by its own\n');
    write(path.join(fork, 'new.js'), 'new work\n');
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    const files = [...r.stdout.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['vendor/lib/new.js']);
  });

  it('names files from the directory when it is a repository of its own', () => {
    const outer = path.join(work, 'home');
    git(work, ['init', '-q', outer]);
    const dir = path.join(outer, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    fs.appendFileSync(path.join(fork, 'README.md'), 'more\n');
    const r = arb(['diff', fork]);
    expect(r.stdout).toMatch(/^diff --git a\/README\.md b\/README\.md\n/);
    expect(gitApply(dir, r.stdout)).toEqual({ status: 0, stderr: '' });
  });
});

describe('what arb diff leaves out', () => {
  it("leaves out what the base's .gitignore ignores, but for files the base's index tracks", () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    write(path.join(dir, 'build/keep.txt'), 'tracked inside an ignored directory\n');
    git(dir, ['add', '-f', 'build/keep.txt']);
    git(dir, ['commit', '-qm', 'keep']);
    write(path.join(dir, 'build/out.o'), 'untracked, ignored\n');
    write(path.join(dir, 'old.log'), 'untracked, ignored\n');
    const fork = cpFork(dir); // with its ignored files, as arb fork --no-ignore makes it
    fs.appendFileSync(path.join(fork, 'build/keep.txt'), 'changed\n');
    fs.appendFileSync(path.join(fork, 'build/out.o'), 'changed\n');
    fs.rmSync(path.join(fork, 'old.log'));
    fs.appendFileSync(path.join(fork, 'tracked.log'), 'changed\n');
    write(path.join(fork, 'build/new.o'), 'new, ignored\n');
    write(path.join(fork, 'node_modules/x/y.js'), 'new, ignored\n');
    write(path.join(fork, 'src/nested/.gitignore'), '*.tmp\n');
    write(path.join(fork, 'src/nested/a.tmp'), 'new, ignored by a new nested .gitignore\n');
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    const files = [...r.stdout.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['build/keep.txt', 'src/nested/.gitignore', 'tracked.log']);
  });

  it("leaves out new files the fork's .gitignore ignores, but never a file that was in the base", () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    fs.appendFileSync(path.join(fork, '.gitignore'), '*.tmp\nsrc/\nREADME.md\n');
    write(path.join(fork, 'scratch.tmp'), 'new, ignored by the fork\n');
    write(path.join(fork, 'src/new.c'), 'new, in a directory the fork ignores\n');
    fs.appendFileSync(path.join(fork, 'src/main.c'), '/* was in the base */\n');
    fs.appendFileSync(path.join(fork, 'README.md'), 'was in the base\n');
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    const files = [...r.stdout.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['.gitignore', 'README.md', 'src/main.c']);
  });

  it("keeps the base's rules even where the fork drops them", () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    write(path.join(fork, '.gitignore'), '');
    write(path.join(fork, 'build/out.o'), 'ignored by the base\n');
    write(path.join(fork, 'x.log'), 'ignored by the base\n');
    const r = arb(['diff', fork]);
    const files = [...r.stdout.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['.gitignore']);
  });

  it('leaves out .git at any depth, and says so of names git refuses', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    write(path.join(dir, 'GIT~1'), 'in the directory already, unchanged: nothing to say\n');
    const fork = cpFork(dir);
    git(fork, ['commit', '-qm', 'a commit in the fork', '--allow-empty']);
    write(path.join(fork, 'vendor/lib/.git/config'), '[core]\n');
    write(path.join(fork, 'vendor/lib/code.c'), 'vendored\n');
    write(path.join(fork, 'sub/.git'), 'gitdir: ../.git/modules/sub\n');
    write(path.join(fork, '.GIT/hooks/x'), 'not git, but git refuses the name\n');
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    const files = [...r.stdout.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['vendor/lib/code.c']);
    expect(r.stderr).toMatch(/^arb diff: left out '.*\/\.GIT': git refuses names that stand for \.git\n$/);
    const copy = path.join(work, 'copy');
    execFileSync('cp', ['-a', '--', dir, copy]);
    expect(gitApply(copy, r.stdout).status).toBe(0);
  });

  it('says it leaves out a FIFO, which a patch cannot carry', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    execFileSync('mkfifo', [path.join(fork, 'pipe')]);
    const r = arb(['diff', fork]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/left out '.*\/pipe': a FIFO cannot be in a patch/);
  });
});

describe('arb diff DIR1 DIR2', () => {
  it('compares two directories, neither a fork', () => {
    const a = path.join(work, 'a');
    const b = path.join(work, 'b');
    write(path.join(a, 'same.txt'), 'same\n');
    write(path.join(b, 'same.txt'), 'same\n');
    write(path.join(a, 'f.txt'), 'old\n');
    write(path.join(b, 'f.txt'), 'new\n');
    write(path.join(b, 'added/x'), 'x\n');
    const r = arb(['diff', a, b]);
    expect(r.status).toBe(1);
    const files = [...r.stdout.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['added/x', 'f.txt']);
    expect(gitApply(a, r.stdout).status).toBe(0);
    expect(snapshot(a)).toEqual(snapshot(b));
    expect(arb(['diff', a, b])).toMatchObject({ status: 0, stdout: '' });
  });
});

describe('arb diff never trusts the fork', () => {
  /** Plants, in a repository, everything that could make git run a program; each writes a marker. */
  function plant(repo: string, markers: string): void {
    const m = (name: string) => `touch ${markers}/${name}`;
    const gitDir = path.join(repo, '.git');
    write(path.join(gitDir, 'evil-include'), `[core]\n\tpager = ${m('included-pager')}\n[diff]\n\texternal = ${m('included-external')}\n`);
    const config = [
      '[include]',
      `\tpath = ${gitDir}/evil-include`,
      '[core]',
      `\tfsmonitor = ${m('fsmonitor')}`,
      `\tpager = ${m('pager')}`,
      `\thooksPath = ${repo}/.githooks`,
      '\tuntrackedCache = true',
      '[diff]',
      `\texternal = ${m('diff-external')}`,
      '[diff "x"]',
      `\ttextconv = ${m('textconv')}; echo TEXTCONV-OUTPUT`,
      `\tcommand = ${m('diff-command')}`,
      '[filter "x"]',
      `\tclean = ${m('clean')}; echo CLEAN-OUTPUT`,
      `\tsmudge = ${m('smudge')}; echo SMUDGE-OUTPUT`,
      `\tprocess = ${m('filter-process')}`,
      '\trequired = true',
      '[alias]',
      `\tdiff-tree = !${m('alias')}`,
      '',
    ].join('\n');
    fs.appendFileSync(path.join(gitDir, 'config'), config);
    for (const hooks of [path.join(gitDir, 'hooks'), path.join(repo, '.githooks')]) {
      for (const hook of ['pre-commit', 'post-checkout', 'post-index-change', 'fsmonitor-watchman', 'pre-auto-gc', 'reference-transaction']) {
        write(path.join(hooks, hook), `#!/bin/sh\n${m(`hook-${hook}`)}\n`, 0o755);
      }
    }
    write(path.join(repo, '.gitattributes'), '* diff=x filter=x\n*.c text eol=crlf ident\n');
  }

  it('runs nothing the fork or its base plant, and the patch is what a clean copy gives', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const markers = path.join(work, 'markers');
    fs.mkdirSync(markers);
    plant(dir, markers);
    const fork = cpFork(dir);
    plant(fork, markers); // and again, as the command in the fork would
    changeFork(fork);
    // And the environment arb is started with must not bring git's configuration in either.
    const hostileEnv = {
      ...process.env,
      GIT_DIR: path.join(fork, '.git'),
      GIT_WORK_TREE: fork,
      GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='touch ${markers}/env-fsmonitor'`,
      GIT_EXTERNAL_DIFF: `touch ${markers}/env-external`,
      GIT_PAGER: `touch ${markers}/env-pager`,
    };
    const r = arb(['diff', fork], { env: hostileEnv });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    expect(fs.readdirSync(markers)).toEqual([]);
    expect(r.stdout).not.toMatch(/TEXTCONV|CLEAN|SMUDGE/);
    expect(r.stdout).toContain('+line three\n');

    // The same trees without their repositories give the same patch, byte for byte.
    const cleanBase = path.join(work, 'clean', '.c.1.base');
    const cleanFork = path.join(work, 'clean', 'c.1');
    copyWithoutGit(path.join(work, '.proj.1.base'), cleanBase);
    copyWithoutGit(fork, cleanFork);
    const clean = arb(['diff', cleanFork]);
    // Without the base's index, the tracked *.log file it changes is left out there: compare the rest.
    expect(clean.stdout).not.toContain('tracked.log');
    const withoutTracked = (p: string) => p.replace(/diff --git a\/tracked\.log[\s\S]*?(?=diff --git|$)/, '');
    expect(withoutTracked(r.stdout)).toBe(withoutTracked(clean.stdout));

    // And git apply (outside any planted config: a copy of the directory without it) takes it.
    const copy = path.join(work, 'copy');
    copyWithoutGit(path.join(work, '.proj.1.base'), copy);
    expect(gitApply(copy, arbDiffBytes([fork], { env: hostileEnv }).stdout)).toEqual({ status: 0, stderr: '' });
    expect(snapshot(copy, ignored)).toEqual(snapshot(fork, ignored));
    expect(fs.readdirSync(markers)).toEqual([]);
  });

  it('shows a link to /etc/passwd or to a secret as a link, with nothing of what it points to', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const secretDir = path.join(work, 'secrets');
    write(path.join(secretDir, 'id_ed25519'), 'FAKE-PRIVATE-KEY-CONTENT\n', 0o600);
    const fork = cpFork(dir);
    fs.symlinkSync('/etc/passwd', path.join(fork, 'passwd'));
    fs.symlinkSync(path.join(secretDir, 'id_ed25519'), path.join(fork, 'key'));
    fs.symlinkSync(secretDir, path.join(fork, 'secrets-dir'));
    // A file replaced by a link to the secret, and a file in the base whose fork side is a link.
    fs.rmSync(path.join(fork, 'README.md'));
    fs.symlinkSync(path.join(secretDir, 'id_ed25519'), path.join(fork, 'README.md'));
    const r = arb(['diff', fork]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('new file mode 120000');
    expect(r.stdout).toContain('+/etc/passwd\n\\ No newline at end of file');
    expect(r.stdout).toContain(`+${secretDir}/id_ed25519\n`);
    expect(r.stdout).not.toContain('root:');
    expect(r.stdout).not.toContain('FAKE-PRIVATE-KEY-CONTENT');
    const copy = path.join(work, 'copy');
    execFileSync('cp', ['-a', '--', dir, copy]);
    expect(gitApply(copy, r.stdout).status).toBe(0);
    expect(fs.readlinkSync(path.join(copy, 'README.md'))).toBe(path.join(secretDir, 'id_ed25519'));
    expect(fs.readlinkSync(path.join(copy, 'secrets-dir'))).toBe(secretDir);
  });

  itIf(!!env.user, env.userMissing)("brings none of the user's secrets in when run as the user", () => {
    const user = env.user!;
    const dir = path.join(work, 'proj');
    write(path.join(dir, 'a.txt'), 'a\n');
    const fork = cpFork(dir);
    fs.symlinkSync(path.join(user.home, '.ssh/id_ed25519'), path.join(fork, 'key'));
    fs.symlinkSync(path.join(user.home, '.aws'), path.join(fork, 'aws'));
    execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, work]);
    const r = arbAsUser(['diff', fork]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`+${user.home}/.ssh/id_ed25519\n`);
    expect(r.stdout).not.toMatch(/FAKE-/);
  });
});

describe('arb diff on bad input', () => {
  function expectError(r: { status: number | null; stdout: string; stderr: string }, message: RegExp): void {
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  }

  it('exits 2 for a directory with no base beside it', () => {
    const dir = path.join(work, 'notafork');
    fs.mkdirSync(dir);
    expectError(arb(['diff', dir]), /^arb diff: '.*notafork' has no base: '.*\.notafork\.base' does not exist: .*arb diff DIR1 DIR2/);
  });

  it('exits 2 for a path that is missing or not a directory', () => {
    write(path.join(work, 'file'), 'x\n');
    expectError(arb(['diff', path.join(work, 'missing')]), /cannot read the fork '.*missing': no such file or directory \(ENOENT\)/);
    expectError(arb(['diff', path.join(work, 'file')]), /the fork '.*file' is not a directory/);
    fs.mkdirSync(path.join(work, 'd'));
    expectError(arb(['diff', path.join(work, 'd'), path.join(work, 'file')]), /DIR2 '.*file' is not a directory/);
  });

  it('exits 2 for a base that is not a directory', () => {
    fs.mkdirSync(path.join(work, 'p.1'));
    write(path.join(work, '.p.1.base'), 'not a directory\n');
    expectError(arb(['diff', path.join(work, 'p.1')]), /the base '.*\.p\.1\.base' of '.*p\.1' is not a directory/);
  });

  it('asks for a fork when given nothing', () => {
    const r = arb(['diff']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
  });

  itIf(!!env.user, env.userMissing)('exits 2, printing nothing, for a file or directory the user cannot read', () => {
    const user = env.user!;
    const dir = path.join(work, 'proj');
    const tmp = path.join(work, 'tmp');
    {
      fs.mkdirSync(tmp);
      write(path.join(dir, 'secret.txt'), 'x\n');
      write(path.join(dir, 'sub/f.txt'), 'y\n');
      write(path.join(dir, 'ok.txt'), 'z\n');
      const fork = cpFork(dir);
      fs.appendFileSync(path.join(fork, 'ok.txt'), 'changed\n');
      execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, work]);
      fs.chmodSync(path.join(fork, 'secret.txt'), 0o000);
      fs.appendFileSync(path.join(fork, 'secret.txt'), 'changed\n'); // as root: the mode stays 000
      let r = arbAsUser(['diff', fork], { env: { TMPDIR: tmp } });
      expectError(r, /^arb diff: cannot read '.*\/secret\.txt': permission denied \(EACCES\)/);
      // Its private repository is gone, failure or not.
      expect(fs.readdirSync(tmp)).toEqual([]);
      fs.chmodSync(path.join(fork, 'secret.txt'), 0o644);
      fs.chmodSync(path.join(fork, 'sub'), 0o000);
      r = arbAsUser(['diff', fork]);
      expectError(r, /^arb diff: cannot list '.*\/sub': permission denied \(EACCES\)/);
      fs.chmodSync(path.join(fork, 'sub'), 0o755);
      r = arbAsUser(['diff', fork]);
      expect(r.status).toBe(1);
    }
  });
});

describe("arb diff's private repository", () => {
  const arbTmp = () => {
    const tmp = path.join(work, 'tmp');
    fs.mkdirSync(tmp, { recursive: true });
    return tmp;
  };

  it('is removed after a diff', () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    changeFork(fork);
    const tmp = arbTmp();
    const e = { ...process.env, TMPDIR: tmp, XDG_RUNTIME_DIR: '' };
    expect(arb(['diff', fork], { env: e }).status).toBe(1);
    expect(fs.readdirSync(tmp)).toEqual([]);
    expect(arb(['diff', fork, dir], { env: e }).status).toBe(1);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it("is made in the user's runtime directory where there is one, out of a confined command's reach", () => {
    const dir = path.join(work, 'proj');
    makeRepo(dir);
    const fork = cpFork(dir);
    changeFork(fork);
    const tmp = arbTmp();
    const runtime = path.join(work, 'runtime');
    fs.mkdirSync(runtime, { mode: 0o700 });
    // git (fast-import, then diff-tree) runs in the private repository: a wrapper on PATH sees where.
    // arb never takes git from /tmp (nor the directories it diffs), so the wrapper is elsewhere.
    const bin = fs.mkdtempSync(path.join(os.homedir(), '.arb-test-bin-'));
    try {
      fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$GIT_DIR" >> ${bin}/where\nexec /usr/bin/git "$@"\n`, { mode: 0o755 });
      const e = { ...process.env, TMPDIR: tmp, XDG_RUNTIME_DIR: runtime, PATH: `${bin}:${process.env.PATH}` };
      expect(arb(['diff', fork], { env: e }).status).toBe(1);
      const where = fs.readFileSync(path.join(bin, 'where'), 'utf8').trim().split('\n');
      expect(where.length).toBeGreaterThan(0);
      for (const w of where) expect(w.startsWith(`${runtime}/arb-git-`)).toBe(true);
      expect(fs.readdirSync(runtime)).toEqual([]);
      expect(fs.readdirSync(tmp)).toEqual([]);
      // One that others could write is not used.
      fs.chmodSync(runtime, 0o777);
      fs.rmSync(path.join(bin, 'where'));
      expect(arb(['diff', fork], { env: e }).status).toBe(1);
      for (const w of fs.readFileSync(path.join(bin, 'where'), 'utf8').trim().split('\n')) expect(w.startsWith(`${tmp}/arb-git-`)).toBe(true);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });

  it('is removed when arb diff is interrupted (Ctrl-C)', async () => {
    const a = path.join(work, 'a');
    const b = path.join(work, 'b');
    // Enough changed files that the diff is still running when the signal comes.
    for (let i = 0; i < 4000; i++) {
      write(path.join(a, `d${i % 30}`, `f${i}`), `old ${i}\n`.repeat(50));
      write(path.join(b, `d${i % 30}`, `f${i}`), `new ${i}\n`.repeat(50));
    }
    const tmp = arbTmp();
    const child = spawn(process.execPath, [CLI, 'diff', a, b], { env: { ...process.env, TMPDIR: tmp, XDG_RUNTIME_DIR: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.resume();
    const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    // Wait until the private repository exists, then interrupt.
    const t0 = Date.now();
    while (fs.readdirSync(tmp).length === 0 && Date.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 5));
    expect(fs.readdirSync(tmp)).toHaveLength(1);
    child.kill('SIGINT');
    const end = await done;
    expect(end.signal).toBe('SIGINT');
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});
