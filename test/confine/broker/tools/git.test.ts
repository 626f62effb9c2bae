// The clone of .git that gh runs with: what configuration changes are let through, and that what
// the command planted in .git (hooks, core.fsmonitor, links) never runs.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
  ConfigEntry, GIT_PINS, GitRefused, NO_REPOSITORY, configChanges, isNetworkUrl, prepareGit, remotesOf, snapshotRepository, unsafeIncludes,
} from '../../../../src/confine/broker/tools/git';

// Fixture repositories are made with git run with no configuration of the machine's.
const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
function git(cwd: string, args: string[], env: NodeJS.ProcessEnv = GIT_ENV): string {
  return execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('configChanges', () => {
  const before: ConfigEntry[] = [
    ['core.bare', 'false'],
    ['remote.origin.url', 'https://github.com/o/r.git'],
    ['remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*'],
    ['branch.main.remote', 'origin'],
    ['branch.main.merge', 'refs/heads/main'],
  ];

  it('lets through what gh and git push write', () => {
    const after: ConfigEntry[] = [
      ...before,
      ['remote.origin.gh-resolved', 'base'],
      ['branch.fix.remote', 'origin'],
      ['branch.fix.merge', 'refs/heads/fix'],
      ['branch.fix.gh-merge-base', 'main'],
      ['remote.origin.fetch', '+refs/heads/fix:refs/remotes/origin/fix'],
      ['remote.fork.url', 'git@github.com:me/r.git'],
      ['branch.pr-12.remote', 'https://github.com/them/r.git'],
      ['branch.pr-12.merge', 'refs/heads/feature'],
      ['remote.fork.fetch', '+refs/heads/*:refs/remotes/fork/*'],
    ];
    const r = configChanges(before, after);
    expect(r.refused).toEqual([]);
    expect(r.changed.length).toBeGreaterThan(0);
  });

  it.each<[string, ConfigEntry[]]>([
    ['core.fsmonitor', [['core.fsmonitor', 'touch /tmp/x']]],
    ['core.hookspath', [['core.hookspath', '.githooks']]],
    ['core.sshcommand', [['core.sshcommand', 'sh -c x']]],
    ['credential.helper', [['credential.helper', '!sh -c x']]],
    ['include.path', [['include.path', '../evil']]],
    ['remote.evil.url', [['remote.evil.url', '/home/me/other-repo']]],
    ['remote.evil2.url', [['remote.evil2.url', 'ext::sh -c x']]],
    ['remote.origin.uploadpack', [['remote.origin.uploadpack', 'sh -c x']]],
    ['branch.x.remote', [['branch.x.remote', '.']]],
    ['branch.y.remote', [['branch.y.remote', 'nosuchremote']]],
  ])('refuses %s', (key, added) => {
    expect(configChanges(before, [...before, ...added]).refused).toEqual([key]);
  });

  it('refuses a fetch refspec taken away, and any change to the rest', () => {
    expect(configChanges(before, before.filter(([k]) => k !== 'remote.origin.fetch')).refused).toEqual(['remote.origin.fetch']);
    expect(configChanges(before, before.map(([k, v]) => [k, k === 'core.bare' ? 'true' : v] as ConfigEntry)).refused).toEqual(['core.bare']);
  });
});

describe('isNetworkUrl and unsafeIncludes', () => {
  it('tells network URLs from local paths and helpers', () => {
    expect(isNetworkUrl('https://github.com/o/r.git')).toBe(true);
    expect(isNetworkUrl('ssh://git@github.com/o/r')).toBe(true);
    expect(isNetworkUrl('git@github.com:o/r.git')).toBe(true);
    for (const bad of ['/srv/repo', 'file:///srv/repo', 'ext::sh -c x', '../r', 'fd::3', 'git@github.com:-oProxyCommand=x']) expect(isNetworkUrl(bad)).toBe(false);
    // This machine is not the network: git there would obey a repository the command made.
    for (const here of ['ssh://localhost/w/evil.git', 'ssh://me@127.0.0.1/w/evil.git', 'ssh://[::1]/w/x.git', 'me@localhost:w/evil.git', `ssh://${os.hostname()}/w/x.git`, 'git://LOCALHOST./x']) {
      expect(isNetworkUrl(here)).toBe(false);
    }
  });

  it('names includes the command could write', () => {
    const entries: ConfigEntry[] = [
      ['include.path', 'relative.inc'],
      ['include.path', '~/.gitconfig-work'],
      ['includeif.gitdir:~/w/.path', '/work/fork/x.inc'],
      ['include.path', '/etc/gitconfig-extra'],
      ['include.path', '/work/fork/..x/evil.inc'],
    ];
    expect(unsafeIncludes(entries, '/home/me', ['/work/fork'])).toEqual(['include.path=relative.inc', 'includeif.gitdir:~/w/.path=/work/fork/x.inc', 'include.path=/work/fork/..x/evil.inc']);
  });
});

describe('prepareGit', () => {
  let base: string;
  let top: string;
  let home: string;
  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-git-tool-')));
    top = path.join(base, 'fork');
    home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-git-home-')));
    fs.mkdirSync(path.join(top, 'src'), { recursive: true });
    git(top, ['init', '-q', '-b', 'main']);
    git(top, ['remote', 'add', 'origin', 'https://github.com/o/r.git']);
    fs.writeFileSync(path.join(top, 'a.txt'), 'a\n');
    git(top, ['add', 'a.txt']);
    git(top, ['commit', '-q', '-m', 'first']);
  });
  afterEach(() => {
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  const context = (snapshot = snapshotRepository(top)) => ({ snapshot, root: top, writable: [top], home, env: {} });
  const leftovers = () => fs.readdirSync(base).filter((n) => n.startsWith('.confine-git-'));

  it('gives no repository to git where there is none', async () => {
    const plain = path.join(base, 'plain');
    fs.mkdirSync(plain);
    const p = await prepareGit(plain, { ...context(undefined), root: plain, writable: [plain] });
    expect(p.env.GIT_DIR).toBe(NO_REPOSITORY);
    expect(p.env).toMatchObject({ GIT_CONFIG_COUNT: String(GIT_PINS.length), GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: '/dev/null', GIT_CONFIG_KEY_1: 'core.fsmonitor' });
  });

  it('pins what keeps git out of nested repositories, in GIT_CONFIG_PARAMETERS too', async () => {
    const p = await prepareGit(top, context());
    for (const [k, v] of GIT_PINS) expect(p.env.GIT_CONFIG_PARAMETERS).toContain(`'${k}'='${v}'`);
    expect(p.env.GIT_CONFIG_PARAMETERS).toContain(`'diff.ignoreSubmodules'='all'`);
    await p.finish(false);
  });

  it('unsets the attributes that name drivers, whatever .gitattributes says at any depth, and puts info/attributes back', async () => {
    const marker = path.join(base, 'filter-ran');
    // A driver the user's own configuration defines, named by attributes the command wrote.
    const global = path.join(base, 'gitconfig');
    fs.writeFileSync(global, `[filter "x"]\n\tclean = touch ${marker}; cat\n[diff "x"]\n\ttextconv = touch ${marker}; cat\n`);
    fs.writeFileSync(path.join(top, '.gitattributes'), '* filter=x diff=x\n');
    fs.writeFileSync(path.join(top, 'src', '.gitattributes'), '* filter=x diff=x\n');
    fs.writeFileSync(path.join(top, '.git', 'info', 'attributes'), '*.txt filter=x');
    fs.writeFileSync(path.join(top, 'src', 'b.txt'), 'b\n');
    fs.appendFileSync(path.join(top, 'a.txt'), 'more\n');
    const p = await prepareGit(top, context());
    const env = { ...GIT_ENV, GIT_CONFIG_GLOBAL: global, ...p.env };
    expect(git(top, ['check-attr', 'filter', 'diff', '--', 'src/b.txt'], env)).toBe('src/b.txt: filter: unspecified\nsrc/b.txt: diff: unspecified\n');
    git(top, ['status', '--porcelain'], env);
    git(top, ['diff'], env);
    git(top, ['add', 'src/b.txt'], env);
    expect(fs.existsSync(marker)).toBe(false);
    expect(await p.finish(true)).toBeUndefined();
    expect(fs.readFileSync(path.join(top, '.git', 'info', 'attributes'), 'utf8')).toBe('*.txt filter=x');
  });

  it('runs git on a clone where hooks and fsmonitor do not run, then puts the clone in place', async () => {
    const snapshot = snapshotRepository(top);
    // What the command does after confine started: gh's own key (allowed), and hooks.
    git(top, ['config', 'remote.origin.gh-resolved', 'base']);
    const marker = path.join(base, 'hook-ran');
    fs.writeFileSync(path.join(top, '.git', 'hooks', 'post-commit'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(top, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });

    const p = await prepareGit(path.join(top, 'src'), context(snapshot));
    expect(p.env.GIT_DIR.startsWith(path.join(base, '.confine-git-'))).toBe(true);
    const env = { ...GIT_ENV, ...p.env };
    expect(git(path.join(top, 'src'), ['rev-parse', '--show-toplevel'], env).trim()).toBe(top);
    git(path.join(top, 'src'), ['commit', '-q', '--allow-empty', '-m', 'by gh'], env);
    git(path.join(top, 'src'), ['config', 'branch.main.remote', 'origin'], env);
    expect(fs.existsSync(marker)).toBe(false);
    // Not yet in .git: the command's .git is untouched while the tool runs.
    expect(git(top, ['log', '--format=%s']).trim()).toBe('first');

    expect(await p.finish(true)).toBeUndefined();
    expect(git(top, ['log', '--format=%s']).trim().split('\n')).toEqual(['by gh', 'first']);
    expect(git(top, ['config', 'branch.main.remote']).trim()).toBe('origin');
    expect(() => git(top, ['config', 'core.worktree'])).toThrow();
    expect(fs.existsSync(path.join(top, '.git', 'hooks', 'post-commit'))).toBe(true);
    expect(leftovers()).toEqual([]);
    expect(fs.readdirSync(top).filter((n) => n.startsWith('.git.confine-'))).toEqual([]);
  });

  it('leaves .git alone when the tool changed nothing in the clone', async () => {
    const p = await prepareGit(top, context());
    const marker = path.join(top, '.git', 'made-by-the-command-meanwhile');
    fs.writeFileSync(marker, '');
    git(top, ['status', '--porcelain'], { ...GIT_ENV, ...p.env });
    await p.finish(true);
    expect(fs.existsSync(marker)).toBe(true);
    expect(() => git(top, ['config', 'core.worktree'])).toThrow();
    expect(leftovers()).toEqual([]);
  });

  it('leaves .git as it was when the tool was stopped', async () => {
    const p = await prepareGit(top, context());
    git(top, ['commit', '-q', '--allow-empty', '-m', 'by gh'], { ...GIT_ENV, ...p.env });
    await p.finish(false);
    expect(git(top, ['log', '--format=%s']).trim()).toBe('first');
    expect(leftovers()).toEqual([]);
  });

  it('refuses a planted core.fsmonitor, and it never runs', async () => {
    const snapshot = snapshotRepository(top);
    const marker = path.join(base, 'fsmonitor-ran');
    git(top, ['config', 'core.fsmonitor', `touch ${marker}`]);
    await expect(prepareGit(top, context(snapshot))).rejects.toThrow(/core\.fsmonitor/);
    expect(fs.existsSync(marker)).toBe(false);
    expect(leftovers()).toEqual([]);
  });

  it('refuses a link in .git, a repository made after confine started, and a .git file', async () => {
    const snapshot = snapshotRepository(top);
    fs.symlinkSync(path.join(top, 'a.txt'), path.join(top, '.git', 'info', 'evil'));
    await expect(prepareGit(top, context(snapshot))).rejects.toThrow(/symbolic link/);
    expect(leftovers()).toEqual([]);

    const inner = path.join(top, 'inner');
    fs.mkdirSync(inner);
    git(inner, ['init', '-q']);
    await expect(prepareGit(inner, context(snapshot))).rejects.toThrow(/was not there when confine started/);

    const wt = path.join(top, 'wt');
    fs.mkdirSync(wt);
    fs.writeFileSync(path.join(wt, '.git'), 'gitdir: /elsewhere\n');
    await expect(prepareGit(wt, context(snapshot))).rejects.toThrow(GitRefused);
  });

  it('refuses a configuration file new since confine started (a submodule planted in .git)', async () => {
    const snapshot = snapshotRepository(top);
    fs.mkdirSync(path.join(top, '.git', 'modules', 'm'), { recursive: true });
    fs.writeFileSync(path.join(top, '.git', 'modules', 'm', 'config'), '[core]\n\tfsmonitor = touch /tmp/x\n');
    await expect(prepareGit(top, context(snapshot))).rejects.toThrow(/modules\/m\/config is new/);
  });

  it('refuses alternates added since confine started (objects of another repository)', async () => {
    const snapshot = snapshotRepository(top);
    fs.writeFileSync(path.join(top, '.git', 'objects', 'info', 'alternates'), '/home/me/private/.git/objects\n');
    await expect(prepareGit(top, context(snapshot))).rejects.toThrow(/objects\/info\/alternates changed/);
  });

  it('refuses a remote defined the old way (.git/remotes, .git/branches) since confine started', async () => {
    const snapshot = snapshotRepository(top);
    fs.mkdirSync(path.join(top, '.git', 'remotes'), { recursive: true });
    fs.writeFileSync(path.join(top, '.git', 'remotes', 'upstream'), `URL: ${top}/evil.git\nPush: refs/heads/*:refs/heads/*\n`);
    await expect(prepareGit(top, context(snapshot))).rejects.toThrow(/\.git\/remotes\/upstream is new since confine started/);
    fs.rmSync(path.join(top, '.git', 'remotes'), { recursive: true });
    fs.mkdirSync(path.join(top, '.git', 'branches'), { recursive: true });
    fs.writeFileSync(path.join(top, '.git', 'branches', 'x'), `${top}/evil.git\n`);
    await expect(prepareGit(top, context(snapshot))).rejects.toThrow(/\.git\/branches\/x is new/);
  });

  it('keeps a remote defined the old way that was there when confine started, and refuses it changed', async () => {
    fs.mkdirSync(path.join(top, '.git', 'remotes'), { recursive: true });
    fs.writeFileSync(path.join(top, '.git', 'remotes', 'old'), 'URL: https://github.com/o/r.git\n');
    const snapshot = snapshotRepository(top);
    const p = await prepareGit(top, context(snapshot));
    await p.finish(false);
    fs.writeFileSync(path.join(top, '.git', 'remotes', 'old'), `URL: ${top}/evil.git\n`);
    await expect(prepareGit(top, context(snapshot))).rejects.toThrow(/\.git\/remotes\/old changed/);
  });

  it('makes the clone in the home directory when the command can write beside the repository', async () => {
    const p = await prepareGit(top, { ...context(), writable: [top, base] });
    expect(p.env.GIT_DIR.startsWith(path.join(home, '.local', 'state', 'confine', '.confine-git-'))).toBe(true);
    await p.finish(true);
    expect(fs.readdirSync(path.join(home, '.local', 'state', 'confine'))).toEqual([]);
  });
});

describe('remotesOf', () => {
  it('names each remote with the URL a push goes to, and branches that push to a URL', () => {
    const entries: ConfigEntry[] = [
      ['remote.origin.url', 'https://github.com/o/r.git'],
      ['remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*'],
      ['remote.fork.url', 'https://github.com/me/r.git'],
      ['remote.fork.pushurl', 'git@github.com:me/r.git'],
      ['branch.main.remote', 'origin'],
      ['branch.topic.pushremote', 'https://github.com/attacker/x.git'],
    ];
    expect(remotesOf(entries)).toEqual(['origin https://github.com/o/r.git', 'fork git@github.com:me/r.git', 'branch:topic https://github.com/attacker/x.git']);
  });
});
