// Secret-looking variables leave the confined command's environment: the pure decision, then
// what a user sees through arb confine (as the unprivileged test user).
import * as fs from 'node:fs';
import * as path from 'node:path';

import { checkKeepName, describeEnvironment, filterEnvironment, secretReason } from '../../src/confine/environment';
import { REPO_ROOT, itIf, probe, testEnv } from '../helpers/env';
import { arbAsUser } from '../helpers/run';

describe('secretReason', () => {
  it.each([
    'GH_TOKEN',
    'GITHUB_TOKEN',
    'GITHUB_ACTIONS_RUNTIME',
    'NPM_TOKEN',
    'npm_config__auth',
    'npm_config_//registry.npmjs.org/:_authToken',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'MY_SERVICE_SECRET',
    'PGPASSWORD',
    'MYSQL_PWD',
    'SMTP_PASS',
    'DB_PASSWD',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'SSH_PRIVATE_KEY',
    'STRIPE_KEY',
    'GH_PAT',
    'SENTRY_DSN',
    'SLACK_WEBHOOK_URL',
    'AZURE_STORAGE_CONNECTION_STRING',
    'VAULT_ADDR',
    'SSH_AUTH_SOCK',
    'GPG_AGENT_INFO',
    'SSHPASS',
    'LDAP_PW',
    'DB_ADMIN_PW',
    'BW_SESSION',
  ])('%s looks secret', (name) => {
    expect(secretReason(name, 'x')).toBeDefined();
  });

  it.each(['PATH', 'HOME', 'USER', 'SHELL', 'TERM', 'LANG', 'PWD', 'OLDPWD', 'EDITOR', 'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'ANTHROPIC_BASE_URL', 'HF_HOME', 'XAUTHORITY', 'KEYTIMEOUT', 'CLAUDE_CODE_SANDBOXED', 'TMPDIR', 'LS_COLORS', 'SSH_ASKPASS'])(
    '%s does not',
    (name) => {
      expect(secretReason(name, '/usr/bin:/bin')).toBeUndefined();
    },
  );

  it('catches credentials by their value whatever the name', () => {
    expect(secretReason('DATABASE_URL', 'postgres://app:hunter2@db:5432/app')).toMatch(/value/);
    expect(secretReason('X', 'ghp_0123456789abcdefghijABCDEFGHIJ012345')).toMatch(/value/);
    expect(secretReason('X', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz')).toMatch(/value/);
    expect(secretReason('X', 'AKIAIOSFODNN7EXAMPLE')).toMatch(/value/);
    expect(secretReason('HOMEPAGE', 'https://example.com/a:b@c')).toBeUndefined();
    expect(secretReason('PROXY', 'http://proxy:3128')).toBeUndefined();
  });

  it('catches private keys (PEM, OpenSSH, PGP) and user:password pairs by their value', () => {
    expect(secretReason('DEPLOY', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----')).toMatch(/value/);
    expect(secretReason('X', '-----BEGIN RSA PRIVATE KEY-----')).toMatch(/value/);
    expect(secretReason('X', '-----BEGIN ENCRYPTED PRIVATE KEY-----')).toMatch(/value/);
    expect(secretReason('X', '-----BEGIN PRIVATE KEY-----')).toMatch(/value/);
    expect(secretReason('X', '-----BEGIN PGP PRIVATE KEY BLOCK-----')).toMatch(/value/);
    expect(secretReason('REGISTRY_CREDS', 'alice:hunter2')).toMatch(/value/);
    expect(secretReason('UPSTREAM', 'bob:s3cr3t!@proxy.corp:3128')).toMatch(/value/);
    // Not a key: a certificate or a public key; not a pair: host:port, lists, words.
    expect(secretReason('CA', '-----BEGIN CERTIFICATE-----')).toBeUndefined();
    expect(secretReason('X', '-----BEGIN PUBLIC KEY-----')).toBeUndefined();
    for (const [name, value] of [
      ['HOST', 'example.com:8443'],
      ['HISTCONTROL', 'ignoredups:erasedups'],
      ['LANGUAGE', 'en_GB:en_US'],
      ['MANPATH', '/usr/share/man:/usr/local/man'],
      ['XDG_DATA_DIRS', 'share1:share2'],
      ['DISPLAY', ':0'],
      ['LS_COLORS', 'rs=0:di=01;34:ln=01;36'],
      ['DBUS_SESSION_BUS_ADDRESS', 'unix:path=/run/user/1000/bus'],
      ['PYTHONWARNINGS', 'ignore::DeprecationWarning'],
    ]) {
      expect([name, secretReason(name, value)]).toEqual([name, undefined]);
    }
  });
});

describe('filterEnvironment', () => {
  const env = { PATH: '/bin', HOME: '/h', GH_TOKEN: 't1', ANTHROPIC_API_KEY: 'k', SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1', UNSET: undefined };

  it('removes what looks secret, sorted, and keeps the rest', () => {
    const r = filterEnvironment(env);
    expect(r.env).toEqual({ PATH: '/bin', HOME: '/h' });
    expect(r.removed.map((x) => x.name)).toEqual(['ANTHROPIC_API_KEY', 'GH_TOKEN', 'SSH_AUTH_SOCK']);
  });

  it('keeps the names in the keep list (-e NAME, a preset), exactly', () => {
    const r = filterEnvironment(env, ['ANTHROPIC_API_KEY', 'SSH_AUTH_SOCK', 'gh_token', 'NOT_SET']);
    expect(r.env).toEqual({ PATH: '/bin', HOME: '/h', ANTHROPIC_API_KEY: 'k', SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1' });
    expect(r.removed.map((x) => x.name)).toEqual(['GH_TOKEN']);
    expect(r.keptMissing).toEqual(['NOT_SET', 'gh_token']);
  });

  it('never puts a value in what -v says', () => {
    const lines = describeEnvironment(filterEnvironment({ GH_TOKEN: 'FAKE-VALUE-123', DATABASE_URL: 'postgres://a:FAKE-PW@h/d' }));
    expect(lines.join('\n')).toMatch(/removed GH_TOKEN .*keep it with -e GH_TOKEN/);
    expect(lines.join('\n')).toMatch(/removed DATABASE_URL/);
    expect(lines.join('\n')).not.toMatch(/FAKE-/);
  });
});

describe('checkKeepName', () => {
  it('takes a name, refuses NAME=VALUE and what is no name', () => {
    expect(checkKeepName('GH_TOKEN')).toBeUndefined();
    expect(checkKeepName('GH_TOKEN=x')).toMatch(/not NAME=VALUE/);
    expect(checkKeepName('1X')).toMatch(/not a variable name/);
    expect(checkKeepName('')).toMatch(/not a variable name/);
  });
});

// --- through arb confine ----------------------------------------------------------------------

const tenv = testEnv();
const haveUser = Boolean(tenv.user && tenv.userWork);
const test = itIf(haveUser, tenv.userMissing ?? 'no test user');
const PROBE = probe('hardening-probe.py');

describe('arb confine: the environment', () => {
  let dir: string;
  beforeAll(() => {
    if (!haveUser) return;
    dir = `${tenv.userWork}-env-${process.pid}`;
    fs.mkdirSync(dir, { recursive: true });
    fs.chownSync(dir, tenv.user!.uid, tenv.user!.gid);
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const SECRET_ENV = {
    GH_TOKEN: 'FAKE-GH-TOKEN',
    AWS_SECRET_ACCESS_KEY: 'FAKE-AWS',
    OPENAI_API_KEY: 'FAKE-OPENAI',
    SSH_AUTH_SOCK: '/tmp/ssh-FAKE/agent.1',
    EDITOR: 'vi',
  };
  const ops = ['env:GH_TOKEN', 'env:AWS_SECRET_ACCESS_KEY', 'env:OPENAI_API_KEY', 'env:SSH_AUTH_SOCK', 'env:EDITOR', 'env:HOME', 'env:CLAUDE_CODE_SANDBOXED'];

  function lines(stdout: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const l of stdout.split('\n')) {
      const m = /^env (\S+) -> (.*)$/.exec(l);
      if (m) out[m[1]] = m[2];
    }
    return out;
  }

  test('removes tokens, keys and SSH_AUTH_SOCK; keeps the rest', () => {
    const r = arbAsUser(['confine', '-d', dir, '--', 'python3', PROBE, ...ops], { env: SECRET_ENV });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(lines(r.stdout)).toEqual({
      GH_TOKEN: 'ENOENT',
      AWS_SECRET_ACCESS_KEY: 'ENOENT',
      OPENAI_API_KEY: 'ENOENT',
      SSH_AUTH_SOCK: 'ENOENT',
      EDITOR: 'OK vi',
      HOME: `OK ${tenv.user!.home}`,
      CLAUDE_CODE_SANDBOXED: 'OK 1',
    });
  });

  test('-e NAME (repeatable) keeps one, and -v lists what was removed without values', () => {
    const r = arbAsUser(['confine', '-v', '-e', 'GH_TOKEN', '--keep-env', 'SSH_AUTH_SOCK', '-d', dir, '--', 'python3', PROBE, ...ops], { env: SECRET_ENV });
    expect(r.status).toBe(0);
    expect(lines(r.stdout)).toMatchObject({ GH_TOKEN: 'OK FAKE-GH-TOKEN', SSH_AUTH_SOCK: 'OK /tmp/ssh-FAKE/agent.1', AWS_SECRET_ACCESS_KEY: 'ENOENT', OPENAI_API_KEY: 'ENOENT' });
    expect(r.stderr).toMatch(/environment: removed AWS_SECRET_ACCESS_KEY/);
    expect(r.stderr).toMatch(/environment: removed OPENAI_API_KEY/);
    expect(r.stderr).not.toMatch(/removed GH_TOKEN/);
    expect(r.stderr).not.toMatch(/FAKE-/);
  });

  test('-e NAME=VALUE is a usage error, and nothing runs', () => {
    const marker = path.join(dir, 'ran');
    const r = arbAsUser(['confine', '-e', 'GH_TOKEN=x', '-d', dir, '--', 'touch', marker]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/-e takes a variable's name, not NAME=VALUE/);
    expect(fs.existsSync(marker)).toBe(false);
  });
});
