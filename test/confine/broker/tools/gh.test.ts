// gh's rules: which command lines are never run, asked every time, or may be allowed always.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { forwardGhEnv, judgeGh, outsidePath, parseGh } from '../../../../src/confine/broker/tools/gh';

let root: string;
let outside: string;
beforeAll(() => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-gh-rules-')));
  root = path.join(base, 'fork');
  outside = path.join(base, 'secret.txt');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(root, 'body.md'), 'body\n');
  fs.writeFileSync(outside, 'secret\n');
  fs.symlinkSync(outside, path.join(root, 'link.md'));
  fs.symlinkSync(base, path.join(root, 'updir'));
});
afterAll(() => fs.rmSync(path.dirname(root), { recursive: true, force: true }));

const judge = (argv: string[], env: Record<string, string> = {}) => judgeGh(argv, { root, cwd: path.join(root, 'sub'), env });

describe('parseGh', () => {
  it.each([
    [['pr', 'create', '--title', 'x'], 'pr', 'create'],
    [['-R', 'o/r', 'pr', 'create'], 'pr', 'create'],
    [['--repo=o/r', 'issue', 'list'], 'issue', 'list'],
    [['-Ro/r', 'issue', 'list'], 'issue', 'list'],
    [['pr', '-R', 'o/r', 'view', '12'], 'pr', 'view'],
    [['--help', 'pr', 'list'], 'pr', 'list'],
    [['browse'], 'browse', undefined],
  ])('finds the (sub)command in %j', (argv, command, subcommand) => {
    const p = parseGh(argv as string[]);
    expect(p.unknownShape).toBeUndefined();
    expect(p.command).toBe(command);
    expect(p.subcommand).toBe(subcommand);
  });

  it('takes -R values as repositories, not commands', () => {
    expect(parseGh(['-R', 'auth', 'pr', 'list'])).toMatchObject({ command: 'pr', subcommand: 'list', repos: ['auth'] });
  });

  it.each([[['-x', 'pr', 'list']], [['--', 'pr', 'list']], [[]], [['pr']], [['pr', '--weird', 'list']], [['-R']]])(
    'calls %j of unknown shape',
    (argv) => {
      expect(parseGh(argv).unknownShape).toBeDefined();
    },
  );
});

describe('judgeGh', () => {
  it.each(['auth', 'config', 'alias', 'extension', 'ext', 'secret', 'variable', 'ssh-key', 'gpg-key'])('never runs gh %s', (cmd) => {
    expect(judge([cmd, 'list']).kind).toBe('never');
    expect(judge(['-R', 'o/r', cmd, 'list']).kind).toBe('never');
    expect(judge(['--help', cmd]).kind).toBe('never');
  });

  it('never runs a command line of unclear shape that names a never-run command anywhere', () => {
    expect(judge(['-X', 'auth', 'token']).kind).toBe('never');
  });

  it('asks about gh api every time', () => {
    expect(judge(['api', 'user'])).toMatchObject({ kind: 'ask', remember: null });
  });

  it('keeps "always" per subcommand, whatever the flags', () => {
    expect(judge(['pr', 'create', '--title', 'x', '--body', 'y'])).toEqual({ kind: 'ask', remember: 'gh pr create' });
    expect(judge(['-R', 'owner/repo', 'pr', 'create'])).toEqual({ kind: 'ask', remember: 'gh pr create' });
    expect(judge(['-R', 'github.com/owner/repo', 'pr', 'view'])).toEqual({ kind: 'ask', remember: 'gh pr view' });
    expect(judge(['status'])).toEqual({ kind: 'ask', remember: 'gh status' });
  });

  it('asks every time about unknown commands (aliases, extensions) and unclear shapes', () => {
    expect(judge(['copilot', 'suggest'])).toMatchObject({ kind: 'ask', remember: null });
    expect(judge(['-x', 'pr', 'list'])).toMatchObject({ kind: 'ask', remember: null });
    expect(judge(['pr', 'Create'])).toMatchObject({ kind: 'ask', remember: null });
  });

  it('asks every time when arguments go on to git', () => {
    expect(judge(['repo', 'clone', 'o/r', '--', '--template=x'])).toMatchObject({ kind: 'ask', remember: null, reason: expect.stringContaining('git') });
  });

  it('asks every time when another host is named', () => {
    expect(judge(['-R', 'evil.example/o/r', 'pr', 'view'])).toMatchObject({ remember: null, reason: expect.stringContaining('evil.example') });
    expect(judge(['pr', 'view', 'https://evil.example/o/r/pull/1'])).toMatchObject({ remember: null });
    expect(judge(['pr', 'view'], { GH_REPO: 'evil.example/o/r' })).toMatchObject({ remember: null });
    expect(judge(['pr', 'view', '-R', 'evil.example/o/r'])).toMatchObject({ remember: null });
    expect(judge(['pr', 'view', '--repo=evil.example/o/r'])).toMatchObject({ remember: null });
    expect(judge(['pr', 'view', '-R', 'o/r'])).toEqual({ kind: 'ask', remember: 'gh pr view' });
    expect(judge(['repo', 'view', 'evil.example/o/r'])).toMatchObject({ remember: null });
    expect(judge(['repo', 'view', 'github.com/o/r'])).toEqual({ kind: 'ask', remember: 'gh repo view' });
    expect(judge(['pr', 'view', 'https://github.com/o/r/pull/1'])).toMatchObject({ remember: 'gh pr view' });
  });

  it('asks every time about subcommands and flags that read or write files by name', () => {
    expect(judge(['release', 'download', 'v1'])).toMatchObject({ remember: null, reason: expect.stringContaining('reads or writes files') });
    expect(judge(['gist', 'create', 'body.md'])).toMatchObject({ remember: null });
    expect(judge(['repo', 'clone', 'o/r'])).toMatchObject({ remember: null });
    expect(judge(['pr', 'create', '--body-file', 'body.md'])).toMatchObject({ remember: null, reason: expect.stringContaining('--body-file') });
    expect(judge(['pr', 'create', '--body-file=new.md'])).toMatchObject({ remember: null });
    expect(judge(['pr', 'create', '-Fnew.md'])).toMatchObject({ remember: null });
    expect(judge(['workflow', 'run', 'ci', '-F', 'x=@file'])).toMatchObject({ remember: null });
    expect(judge(['pr', 'create', '--fill'])).toEqual({ kind: 'ask', remember: 'gh pr create' });
  });

  it('asks every time when an argument names a file outside the directory', () => {
    expect(judge(['pr', 'comment', '1', '--body', outside])).toMatchObject({ remember: null, reason: expect.stringContaining('outside') });
    const outsideReason = { remember: null, reason: expect.stringContaining('outside') };
    expect(judge(['pr', 'comment', '1', '--body', '../../secret.txt'])).toMatchObject(outsideReason);
    expect(judge(['pr', 'comment', '1', `--body=${outside}`])).toMatchObject(outsideReason);
    expect(judge(['pr', 'comment', '1', `-b${outside}`])).toMatchObject(outsideReason);
    expect(judge(['pr', 'comment', '1', '--body', '../link.md'])).toMatchObject(outsideReason);
    expect(judge(['pr', 'comment', '1', '--body', '../updir/new-file'])).toMatchObject(outsideReason);
    expect(judge(['pr', 'comment', '1', '--body', '../body.md'])).toEqual({ kind: 'ask', remember: 'gh pr comment' });
  });
});

describe('outsidePath', () => {
  it('sees links out of the directory, and names that are only text', () => {
    const ctx = { root, cwd: root };
    expect(outsidePath('link.md', ctx)).toBe('link.md');
    expect(outsidePath('body.md', ctx)).toBeUndefined();
    expect(outsidePath('owner/repo', ctx)).toBeUndefined();
    expect(outsidePath('~/.ssh/id_ed25519', ctx)).toBe('~/.ssh/id_ed25519');
    // A name that starts with two dots is a name in the directory; `..` is not.
    expect(outsidePath('..notes.md', ctx)).toBeUndefined();
    expect(outsidePath('../notes.md', ctx)).toBe('../notes.md');
  });
});

describe('forwardGhEnv', () => {
  it('passes how gh prints and which repository, never tokens, hosts, config or programs', () => {
    const env = forwardGhEnv({
      TERM: 'xterm', NO_COLOR: '1', GH_REPO: 'o/r', GH_TOKEN: 't', GITHUB_TOKEN: 't', GH_ENTERPRISE_TOKEN: 't', GH_HOST: 'h',
      GH_CONFIG_DIR: '/x', GH_EDITOR: 'vi', GH_BROWSER: 'x', GH_PAGER: 'less', PAGER: 'x', EDITOR: 'x', BROWSER: 'x',
      GIT_SSH_COMMAND: 'x', PATH: '/bin', HOME: '/h', XDG_CONFIG_HOME: '/x', GH_DEBUG: 'api',
    });
    expect(env).toEqual({ TERM: 'xterm', NO_COLOR: '1', GH_REPO: 'o/r' });
  });
});
