// What a confined command may and may not touch, tried as the unprivileged test user whose home
// holds fake secrets. Every denial is paired with an access that works. Each test runs twice:
// with Landlock alone (ARB_CONFINE_NO_NAMESPACES=1), asserting Landlock's errno (EACCES, EXDEV;
// the user's own permissions would allow all of these), and as confine runs by default here,
// with the hardening layers too (namespaces: a masked home answers ENOENT, a read-only root
// EROFS), asserting that the same things are allowed and the same denied.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, testEnv, itIf } from '../helpers/env';
import { asUser } from '../helpers/run';
import { PROBE, ProbeRun, answer, confineProbe, parseProbe, removeUserArea, userDir, userFile } from './confine-helpers';

const env = testEnv();
const user = env.user;
const home = user?.home ?? `/home/${process.env.ARB_TEST_USER || 'arbtest'}`;
const haveUser = Boolean(user && env.userWork);
const test = itIf(haveUser, env.userMissing ?? 'no test user');

type Mode = 'landlock' | 'default';
const MODES: [string, Mode][] = [
  ['Landlock alone', 'landlock'],
  ['with the hardening layers', 'default'],
];
let mode: Mode = 'landlock';

function modeEnv(): NodeJS.ProcessEnv {
  return mode === 'landlock' ? { ARB_CONFINE_NO_NAMESPACES: '1' } : {};
}

/** confineProbe in the current mode. */
function probeIn(args: string[], ops: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): ProbeRun {
  return confineProbe(args, ops, { ...options, env: { ...modeEnv(), ...options.env } });
}

/**
 * Asserts probe answers as one object, so a failure shows every mismatch at once. With the
 * hardening layers a denial may come from them first, so any errno counts as denied there.
 */
function expectAnswers(run: ProbeRun, expected: Record<string, string>): void {
  const actual: Record<string, string | undefined> = {};
  for (const op of Object.keys(expected)) actual[op] = answer(run, op);
  if (run.r.status !== 0) throw new Error(`confine failed (${run.r.status}): ${run.r.stderr}`);
  if (mode === 'landlock') {
    expect(actual).toEqual(expected);
    return;
  }
  const loose: Record<string, unknown> = {};
  for (const [op, want] of Object.entries(expected)) loose[op] = want === 'OK' ? 'OK' : expect.stringMatching(/^E[A-Z]+$/);
  expect(actual).toEqual(loose);
}

afterAll(removeUserArea);

const SECRETS = ['.ssh/id_ed25519', '.aws/credentials', '.netrc', '.config/gh/hosts.yml', '.bashrc', '.profile', '.zshrc', 'notes.txt'];

describe.each(MODES)('arb confine: reading (%s)', (_label, m) => {
  beforeAll(() => {
    mode = m;
  });
  let project: string;
  beforeAll(() => {
    if (!haveUser) return;
    project = userDir('read');
    userFile(path.join(project, 'README'), 'project file\n');
  });

  test('the user can read its secrets without confine (so the denials below are the sandbox)', () => {
    const r = asUser('python3', [PROBE, ...SECRETS.map((s) => `read:${home}/${s}`)]);
    const results = parseProbe(r.stdout);
    for (const s of SECRETS) expect(results[`read ${home}/${s}`]).toBe('OK');
  });

  test('secrets in the home directory are unreadable (EACCES), ~/.claude.json too (no claude preset); git config and the project are readable', () => {
    const run = probeIn(['-d', project], [
      ...SECRETS.map((s) => `read:${home}/${s}`),
      `read:${home}/.gitconfig`,
      `read:${home}/.config/git/ignore`,
      `read:${home}/.claude.json`,
      `read:${project}/README`,
      'read:/etc/passwd',
    ]);
    expectAnswers(run, {
      ...Object.fromEntries(SECRETS.map((s) => [`read:${home}/${s}`, 'EACCES'])),
      [`read:${home}/.gitconfig`]: 'OK',
      [`read:${home}/.config/git/ignore`]: 'OK',
      [`read:${home}/.claude.json`]: 'EACCES',
      [`read:${project}/README`]: 'OK',
      'read:/etc/passwd': 'OK',
    });
  });

  test('names can be listed everywhere, the home directory and ~/.ssh included, but not read', () => {
    const run = probeIn(['-d', project], [
      'list:/',
      `list:${path.dirname(home)}`,
      `list:${home}`,
      `list:${home}/.ssh`,
      `read:${home}/.ssh/id_ed25519`,
      `stat:${home}/.ssh/id_ed25519`,
    ]);
    expectAnswers(run, {
      'list:/': 'OK',
      [`list:${path.dirname(home)}`]: 'OK',
      [`list:${home}`]: 'OK',
      // With the hardening layers the home directory is an empty file system with only the
      // granted paths in it: ~/.ssh is not there at all.
      [`list:${home}/.ssh`]: mode === 'landlock' ? 'OK' : 'ENOENT',
      [`read:${home}/.ssh/id_ed25519`]: 'EACCES',
      [`stat:${home}/.ssh/id_ed25519`]: mode === 'landlock' ? 'OK' : 'ENOENT',
    });
  });

  test('programs in ~/.local/bin run; the user’s other home files do not', () => {
    const r = probeIn(['-d', project], [`exec:${home}/.local/bin/mytool`, `read:${home}/.local/bin/mytool`]);
    expectAnswers(r, { [`exec:${home}/.local/bin/mytool`]: 'OK', [`read:${home}/.local/bin/mytool`]: 'OK' });
    const ran = asUser(process.execPath, [CLI, 'confine', '-d', project, 'mytool'], { env: modeEnv() });
    expect(ran.stdout).toBe('mytool ran\n');
  });

  test('-r PATH makes a file in the home directory readable', () => {
    const without = probeIn(['-d', project], [`read:${home}/notes.txt`]);
    const withR = probeIn(['-d', project, '-r', `${home}/notes.txt`], [`read:${home}/notes.txt`, `read:${home}/.netrc`]);
    expectAnswers(without, { [`read:${home}/notes.txt`]: 'EACCES' });
    expectAnswers(withR, { [`read:${home}/notes.txt`]: 'OK', [`read:${home}/.netrc`]: 'EACCES' });
  });

  test('a $PATH entry in the home directory is readable, and only that one', () => {
    const bin = path.join(home, 'tools-bin');
    fs.mkdirSync(bin, { recursive: true });
    userFile(path.join(bin, 'tool'), '#!/bin/sh\necho tool\n', 0o755);
    fs.chownSync(bin, user!.uid, user!.gid);
    try {
      const pathVar = `${bin}:/usr/bin:/bin`;
      const run = probeIn(['-d', project], [`read:${bin}/tool`, `read:${home}/.netrc`], { env: { PATH: pathVar } });
      expectAnswers(run, { [`read:${bin}/tool`]: 'OK', [`read:${home}/.netrc`]: 'EACCES' });
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe.each(MODES)('arb confine: writing (%s)', (_label, m) => {
  beforeAll(() => {
    mode = m;
  });
  let project: string;
  let sibling: string;
  let outside: string;
  beforeAll(() => {
    if (!haveUser) return;
    const parent = userDir('write');
    project = userDir('proj', parent);
    sibling = userDir('proj.2', parent); // another fork of the same directory
    outside = userDir('outside');
    userFile(path.join(sibling, 'file'), 'x\n');
    userFile(path.join(outside, 'file'), 'x\n');
  });

  test('the project, caches and temporary directories are writable; the home, ~/.bashrc, ~/.local/bin, other directories are not', () => {
    const tag = `${process.pid}-${Date.now()}`;
    const run = probeIn(['-d', project], [
      `create:${project}/new`,
      `mkdir:${project}/newdir`,
      `create:${home}/.cache/new-${tag}`,
      `create:${home}/.npm/new-${tag}`,
      // In ~/.cargo, its registry (the top stays read-only while cargo's config is missing: see
      // the caches table, hardening-attacks.test.ts).
      `create:${home}/.cargo/registry/new-${tag}`,
      `create:/tmp/arb-confine-${tag}`,
      `create:/var/tmp/arb-confine-${tag}`,
      'write:/dev/null',
      `create:${home}/new-${tag}`,
      `write:${home}/.bashrc`,
      `write:${home}/.gitconfig`,
      `create:${home}/.local/bin/new-${tag}`,
      `write:${home}/.local/bin/mytool`,
      `create:${path.dirname(project)}/new`,
      `write:${sibling}/file`,
      `create:${sibling}/new`,
      `write:${outside}/file`,
      `unlink:${outside}/file`,
      `mkdir:${home}/.ssh/new`,
    ]);
    expectAnswers(run, {
      [`create:${project}/new`]: 'OK',
      [`mkdir:${project}/newdir`]: 'OK',
      [`create:${home}/.cache/new-${tag}`]: 'OK',
      [`create:${home}/.npm/new-${tag}`]: 'OK',
      [`create:${home}/.cargo/registry/new-${tag}`]: 'OK',
      [`create:/tmp/arb-confine-${tag}`]: 'OK',
      [`create:/var/tmp/arb-confine-${tag}`]: 'OK',
      'write:/dev/null': 'OK',
      [`create:${home}/new-${tag}`]: 'EACCES',
      [`write:${home}/.bashrc`]: 'EACCES',
      [`write:${home}/.gitconfig`]: 'EACCES',
      [`create:${home}/.local/bin/new-${tag}`]: 'EACCES',
      [`write:${home}/.local/bin/mytool`]: 'EACCES',
      [`create:${path.dirname(project)}/new`]: 'EACCES',
      [`write:${sibling}/file`]: 'EACCES',
      [`create:${sibling}/new`]: 'EACCES',
      [`write:${outside}/file`]: 'EACCES',
      [`unlink:${outside}/file`]: 'EACCES',
      [`mkdir:${home}/.ssh/new`]: 'EACCES',
    });
    for (const f of [`${home}/.cache/new-${tag}`, `${home}/.npm/new-${tag}`, `${home}/.cargo/registry/new-${tag}`, `/tmp/arb-confine-${tag}`, `/var/tmp/arb-confine-${tag}`]) {
      fs.rmSync(f, { force: true });
    }
  });

  test('-w PATH makes a directory outside writable; without it, it is not', () => {
    const without = probeIn(['-d', project], [`create:${outside}/w1`]);
    const withW = probeIn(['-d', project, '-w', outside], [`create:${outside}/w2`, `create:${sibling}/w2`]);
    expectAnswers(without, { [`create:${outside}/w1`]: 'EACCES' });
    expectAnswers(withW, { [`create:${outside}/w2`]: 'OK', [`create:${sibling}/w2`]: 'EACCES' });
  });

  test('-w PATH in the home directory makes just that writable (relative paths from the working directory)', () => {
    const dir = path.join(home, '.claude');
    fs.mkdirSync(dir, { recursive: true });
    fs.chownSync(dir, user!.uid, user!.gid);
    try {
      const run = probeIn(['-d', project, '-w', '.claude'], [`create:${dir}/session`, `read:${home}/.netrc`], { cwd: home });
      expectAnswers(run, { [`create:${dir}/session`]: 'OK', [`read:${home}/.netrc`]: 'EACCES' });
      // An unexpanded ~ (quoted, or in --write=~/…) means the home directory, as in a shell.
      const tilde = probeIn(['-d', project, '--write=~/.claude'], [`create:${dir}/session2`]);
      expectAnswers(tilde, { [`create:${dir}/session2`]: 'OK' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(MODES)('arb confine: ways around the rules (%s)', (_label, m) => {
  beforeAll(() => {
    mode = m;
  });
  let project: string;
  beforeAll(() => {
    if (!haveUser) return;
    project = userDir('around');
    // Made by the user before confining: a link into the home directory.
    fs.symlinkSync(`${home}/.ssh/id_ed25519`, path.join(project, 'key-link'));
    fs.symlinkSync(`${home}/.ssh`, path.join(project, 'ssh-dir'));
    fs.lchownSync(path.join(project, 'key-link'), user!.uid, user!.gid);
    fs.lchownSync(path.join(project, 'ssh-dir'), user!.uid, user!.gid);
  });

  test('a symbolic link to a secret, made before or by the command, does not reach it', () => {
    const run = probeIn(['-d', project], [
      `read:${project}/key-link`,
      `read:${project}/ssh-dir/id_ed25519`,
      `symlink:${home}/.aws/credentials>${project}/aws-link`,
      `read:${project}/aws-link`,
      `symlink:${home}/.netrc>${home}/.cache/netrc-link`,
      `read:${home}/.cache/netrc-link`,
    ]);
    fs.rmSync(`${home}/.cache/netrc-link`, { force: true });
    expectAnswers(run, {
      [`read:${project}/key-link`]: 'EACCES',
      [`read:${project}/ssh-dir/id_ed25519`]: 'EACCES',
      [`symlink:${home}/.aws/credentials>${project}/aws-link`]: 'OK',
      [`read:${project}/aws-link`]: 'EACCES',
      [`symlink:${home}/.netrc>${home}/.cache/netrc-link`]: 'OK',
      [`read:${home}/.cache/netrc-link`]: 'EACCES',
    });
  });

  test('the command cannot make a hard link to a secret (EXDEV), nor move one out (EACCES)', () => {
    const run = probeIn(['-d', project], [
      `link:${home}/.ssh/id_ed25519>${project}/key-hard`,
      `link:${home}/.netrc>${home}/.cache/netrc-hard`,
      `rename:${home}/.ssh/id_ed25519>${project}/key-moved`,
      `rename:${home}/.ssh>${project}/ssh-moved`,
      `rename:${home}/.aws/credentials>/tmp/aws-moved-${process.pid}`,
      // Moving within what is writable works.
      `create:${project}/a`,
      `mkdir:${project}/sub`,
      `rename:${project}/a>${project}/sub/a`,
    ]);
    expectAnswers(run, {
      [`link:${home}/.ssh/id_ed25519>${project}/key-hard`]: 'EXDEV',
      [`link:${home}/.netrc>${home}/.cache/netrc-hard`]: 'EXDEV',
      [`rename:${home}/.ssh/id_ed25519>${project}/key-moved`]: 'EACCES',
      [`rename:${home}/.ssh>${project}/ssh-moved`]: 'EACCES',
      [`rename:${home}/.aws/credentials>/tmp/aws-moved-${process.pid}`]: 'EACCES',
      [`create:${project}/a`]: 'OK',
      [`mkdir:${project}/sub`]: 'OK',
      [`rename:${project}/a>${project}/sub/a`]: 'OK',
    });
    expect(fs.readFileSync(`${home}/.ssh/id_ed25519`, 'utf8')).toContain('FAKE-SSH-PRIVATE-KEY');
  });

  test('/proc/self/root and /proc/self/cwd do not reach a secret', () => {
    const run = probeIn(['-d', project], [
      `read:/proc/self/root${home}/.ssh/id_ed25519`,
      `read:/proc/self/root${home}/.gitconfig`,
      `read:/proc/self/cwd/../../../..${home}/.netrc`,
    ]);
    expectAnswers(run, {
      [`read:/proc/self/root${home}/.ssh/id_ed25519`]: 'EACCES',
      [`read:/proc/self/root${home}/.gitconfig`]: 'OK',
      [`read:/proc/self/cwd/../../../..${home}/.netrc`]: 'EACCES',
    });
  });

  test("another process's environment and root (/proc/PID) are out of reach; its own are not", () => {
    // The user's shell outside, its environment holding a token; the command inside.
    const script = [
      'SECRET_TOKEN=outside sleep 30 & victim=$!',
      `node ${JSON.stringify(CLI)} confine -d ${project} -- python3 ${PROBE} environ:$victim environ:self read:/proc/$victim/root${home}/.gitconfig read:/proc/$victim/cmdline`,
      'kill $victim',
    ].join('\n');
    const r = asUser('/bin/sh', ['-c', script], { env: modeEnv() });
    const results = parseProbe(r.stdout);
    const victim = Object.keys(results).find((k) => k.startsWith('environ ') && k !== 'environ self')!.split(' ')[1];
    const denied = mode === 'landlock' ? 'EACCES' : expect.stringMatching(/^E[A-Z]+$/);
    expect(results).toEqual({
      [`environ ${victim}`]: denied,
      'environ self': 'OK',
      [`read /proc/${victim}/root${home}/.gitconfig`]: denied,
      // Command lines are public to every process of the user: Landlock does not hide them, the
      // hardening layers do (a PID namespace with its own /proc).
      [`read /proc/${victim}/cmdline`]: mode === 'landlock' ? 'OK' : expect.stringMatching(/^E[A-Z]+$/),
    });
  });

  test('no new privileges: NoNewPrivs is 1 and a set-user-ID program gains nothing', () => {
    const r = asUser(process.execPath, [CLI, 'confine', '-d', project, '--', 'sh', '-c', 'grep NoNewPrivs /proc/self/status; su -c true root </dev/null; echo su=$?'], { env: modeEnv() });
    expect(r.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(r.stdout).toMatch(/^su=1$/m);
  });

  test('a user namespace gives no way to mount a secret into view: Landlock refuses mount(2) (EPERM)', () => {
    // Without confine, the user could bind ~/.ssh into the project and read it through there.
    const unconfined = parseProbe(asUser('python3', [PROBE, `bindmount:${home}/.ssh>${project}/mnt0`]).stdout);
    expect(unconfined[`bindmount ${home}/.ssh>${project}/mnt0`]).toBe('OK');
    const run = probeIn(['-d', project], [`bindmount:${home}/.ssh>${project}/mnt1`]);
    expectAnswers(run, { [`bindmount:${home}/.ssh>${project}/mnt1`]: 'EPERM' });
  });
});
