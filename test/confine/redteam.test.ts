// Ways around confine found by trying it as a hostile command would, as the unprivileged test
// user, in each jail: the default (Landlock with namespaces), Landlock alone, and bwrap. Each
// denial is paired with an access that works, and asserts the errno.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, itIf, testEnv } from '../helpers/env';
import { arbAsUser, asUser } from '../helpers/run';
import { PROBE, answer, confineProbe } from './confine-helpers';

const env = testEnv();
const user = env.user;
const haveUser = Boolean(user && env.userWork);
const test = itIf(haveUser, env.userMissing ?? 'no test user');

const JAILS: [string, string[]][] = [
  ['namespaces', []],
  ['bwrap', ['--jail', 'bwrap']],
];

// A project in /var/tmp, which every jail lets the command write: the directory forked, its
// base and another fork of it lie in a writable path, beside the fork.
let area = '';
let project = '';

function own(p: string): void {
  fs.chownSync(p, user!.uid, user!.gid);
}

beforeAll(() => {
  if (!haveUser) return;
  area = fs.mkdtempSync('/var/tmp/arb-redteam-');
  fs.chmodSync(area, 0o755);
  own(area);
  project = path.join(area, 'proj');
  fs.mkdirSync(project);
  own(project);
  fs.writeFileSync(path.join(project, 'a.txt'), 'original\n');
  own(path.join(project, 'a.txt'));
  const other = arbAsUser(['fork', '--print', '-n', 'other'], { cwd: project });
  expect(other.status).toBe(0);
});

afterAll(() => {
  if (area) fs.rmSync(area, { recursive: true, force: true });
});

describe('a fork inside a writable path (/var/tmp)', () => {
  let n = 0;
  const ops = () => [
    `create:${area}/free.${++n}`,
    `write:${project}/a.txt`,
    `create:${project}/new`,
    `write:${area}/.proj.red.base/a.txt`,
    `chmod:${area}/.proj.red.base/a.txt`,
    `write:${area}/proj.other/a.txt`,
    `write:${area}/.proj.other.base/a.txt`,
    `create:${area}/proj.red/mine`,
  ];

  for (const [jail, flags] of JAILS) {
    test(`${jail}: the directory forked, its base and the other forks stay read-only; the fork and /var/tmp are writable`, () => {
      const o = ops();
      const run = confineProbe(['--rm', '-n', 'red', ...flags], o, { cwd: project });
      expect(run.r.stderr).toContain(`forked ${project}`);
      expect(answer(run, o[0])).toBe('OK');
      expect(answer(run, o[7])).toBe('OK');
      for (const denied of o.slice(1, 7)) expect([denied, answer(run, denied)]).toEqual([denied, 'EROFS']);
      expect(fs.readFileSync(path.join(project, 'a.txt'), 'utf8')).toBe('original\n');
      expect(fs.existsSync(path.join(project, 'new'))).toBe(false);
    });
  }

  test('Landlock alone: says the fork is in a writable path, where the base and the directory forked can be written', () => {
    const run = confineProbe(['--rm', '--landlock-only', '-n', 'red'], [`read:${project}/a.txt`], { cwd: project });
    expect(answer(run, `read:${project}/a.txt`)).toBe('OK');
    expect(run.r.stderr).toContain(`the fork is inside /var/tmp, which the command may write`);
  });

  test('Landlock alone: a fork outside every writable path gets no such warning', () => {
    const elsewhere = fs.mkdtempSync(path.join(env.userWork!, 'redteam-'));
    try {
      own(elsewhere);
      const run = confineProbe(['--rm', '--landlock-only'], [`read:${PROBE}`], { cwd: elsewhere });
      expect(answer(run, `read:${PROBE}`)).toBe('OK');
      expect(run.r.stderr).not.toContain('which the command may write');
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

// A descriptor confine inherits (its caller left one open) must not reach the command: only
// 0, 1 and 2 do. Run with fd 9 open on a file of the user's, as runuser passes it on.
function withInheritedFd(args: string[]): { status: number | null; fds: string[]; stderr: string } {
  const file = path.join(area, 'inherited');
  fs.writeFileSync(file, 'inherited\n');
  own(file);
  const fd = fs.openSync(file, 'r');
  try {
    const stdio: ('pipe' | number)[] = ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', fd];
    const r = spawnSync('runuser', ['-u', user!.name, '--', 'env', '-i', `HOME=${user!.home}`, 'PATH=/usr/bin:/bin', ...args], {
      cwd: project,
      stdio,
      timeout: 120_000,
    });
    const out = r.stdout ? r.stdout.toString() : '';
    const m = /FDS (\[.*\])/.exec(out);
    return { status: r.status, fds: m ? (JSON.parse(m[1].replace(/'/g, '"')) as string[]) : [], stderr: r.stderr ? r.stderr.toString() : '' };
  } finally {
    fs.closeSync(fd);
  }
}

const LIST_FDS = ['python3', '-c', "import os; print('FDS', sorted(os.listdir('/proc/self/fd'), key=int))"];

describe('inherited descriptors', () => {
  test('unconfined, the command would get fd 9', () => {
    const r = withInheritedFd(LIST_FDS);
    expect(r.fds).toContain('9');
  });

  for (const [jail, flags] of [...JAILS, ['Landlock alone', ['--landlock-only']] as [string, string[]]]) {
    test(`${jail}: only 0, 1, 2 reach the command (and the descriptor listing /proc/self/fd)`, () => {
      const r = withInheritedFd([process.execPath, CLI, 'confine', '--rm', ...flags, '--', ...LIST_FDS]);
      expect([r.status, r.stderr]).toEqual([0, expect.any(String)]);
      expect(r.fds).toEqual(['0', '1', '2', '3']);
    });
  }
});

// Tokens whose format gives them away, under names that do not: a Stripe key, a JWT.
describe('secrets in the environment, by their format', () => {
  const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
  const vars = { PAYMENTS: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc', SESSION_BEARER: JWT, PLAIN_SETTING: 'eyJ-not-a-token' };

  test('a Stripe key and a JWT are removed; a variable that only looks alike stays', () => {
    const script = "import os; print('ENV', sorted(k for k in ('PAYMENTS','SESSION_BEARER','PLAIN_SETTING') if k in os.environ))";
    const outside = asUser('/usr/bin/python3', ['-c', script], { env: vars });
    expect(outside.stdout).toContain("ENV ['PAYMENTS', 'PLAIN_SETTING', 'SESSION_BEARER']");
    const r = arbAsUser(['confine', '-d', project, '--', 'python3', '-c', script], { env: vars });
    expect([r.status, r.stdout]).toEqual([0, "ENV ['PLAIN_SETTING']\n"]);
  });
});
