// How arb confine runs the command: its arguments, its environment and descriptors, the status
// it exits with, 127/126, the fork it works in, --rm, refusals. Run as the unprivileged test user.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, testEnv, itIf } from '../helpers/env';
import { RunOptions, RunResult, arbAsUser, asUser } from '../helpers/run';
import { removeUserArea, userDir, userFile } from './confine-helpers';

const env = testEnv();
const user = env.user;
const home = user?.home ?? `/home/${process.env.ARB_TEST_USER || 'arbtest'}`;
const haveUser = Boolean(user && env.userWork);
const test = itIf(haveUser, env.userMissing ?? 'no test user');

/** Landlock alone: confine becomes the command (exec mode). */
const LANDLOCK_ONLY = { ARB_CONFINE_NO_NAMESPACES: '1' };

function confine(args: string[], options: RunOptions = {}): RunResult {
  return arbAsUser(['confine', ...args], options);
}

/** A shell script run as the user, with CLI set to the arb under test. */
function userShell(script: string, options: RunOptions = {}): RunResult {
  return asUser('/bin/bash', ['-c', script], { ...options, env: { CLI, ...options.env } });
}

/** The entries of a directory, but its own fork bookkeeping is what the tests look at. */
function siblings(dir: string): string[] {
  return fs.readdirSync(path.dirname(dir)).sort();
}

afterAll(removeUserArea);

describe('arb confine: the command line', () => {
  let project: string;
  beforeAll(() => {
    if (haveUser) project = userDir('cmdline');
  });

  test("options after CMD are CMD's own: ls -d /, python3 -c", () => {
    const ls = confine(['-d', project, 'ls', '-d', '/']);
    expect(ls.stderr).toBe('');
    expect(ls.stdout).toBe('/\n');
    expect(ls.status).toBe(0);
    const py = confine(['-d', project, 'python3', '-c', 'print(1)']);
    expect(py.stdout).toBe('1\n');
    expect(py.status).toBe(0);
  });

  test('-- ends confine’s options; arguments reach the command exactly (empty, spaces, numbers, --help)', () => {
    const r = confine(['-d', project, '--', 'printf', '[%s]', '', 'a b', '010', '--help', '-d', '--', '-v']);
    expect(r.stdout).toBe('[][a b][010][--help][-d][--][-v]');
    expect(r.status).toBe(0);
    const dashed = confine(['-v', '-d', project, '-w', '/tmp', '--', 'sh', '-c', 'echo "$0" "$1"', 'x', '-w']);
    expect(dashed.stdout).toBe('x -w\n');
  });

  test('without CMD it is a usage error (2)', () => {
    const r = confine(['-d', project]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/name the command to run/);
  });

  test('the confine alias works the same', () => {
    const r = asUser(process.execPath, [CLI, 'confine', '-d', project, 'echo', 'via', 'arb']);
    expect(r.stdout).toBe('via arb\n');
  });

  test('a command not on PATH: 127 and a message; found but not runnable: 126', () => {
    userFile(path.join(project, 'notexec.sh'), 'echo hi\n', 0o644);
    fs.mkdirSync(path.join(project, 'adir'), { recursive: true });
    const missing = confine(['-d', project, 'no-such-command-xyz']);
    expect(missing.status).toBe(127);
    expect(missing.stderr).toBe('arb confine: no-such-command-xyz: command not found\n');
    const relMissing = confine(['-d', project, './nothing-here']);
    expect(relMissing.status).toBe(127);
    expect(relMissing.stderr).toMatch(/\.\/nothing-here: no such file or directory/);
    const notExec = confine(['-d', project, './notexec.sh']);
    expect(notExec.status).toBe(126);
    expect(notExec.stderr).toMatch(/\.\/notexec\.sh: permission denied/);
    const dir = confine(['-d', project, './adir']);
    expect(dir.status).toBe(126);
    expect(dir.stderr).toMatch(/is a directory/);
  });

  test('a relative CMD with a / is looked up in the directory it runs in', () => {
    userFile(path.join(project, 'run.sh'), '#!/bin/sh\necho "ran in $(pwd)"\n', 0o755);
    const r = confine(['-d', project, './run.sh'], { cwd: '/' });
    expect(r.stdout).toBe(`ran in ${project}\n`);
  });

  test('a script without #! runs with /bin/sh, as execvp does', () => {
    userFile(path.join(project, 'plain.sh'), 'echo plain "$1"\n', 0o755);
    const r = confine(['-d', project, './plain.sh', 'arg'], { env: LANDLOCK_ONLY });
    expect(r.stdout).toBe('plain arg\n');
    expect(r.status).toBe(0);
  });

  test('a program in the home directory that is not granted: 126 before anything runs, with what to do', () => {
    const bin = path.join(home, 'private-bin');
    fs.mkdirSync(bin, { recursive: true });
    userFile(path.join(bin, 'tool'), '#!/bin/sh\necho tool ran\n', 0o755);
    fs.chownSync(bin, user!.uid, user!.gid);
    try {
      const r = confine(['-d', project, `${bin}/tool`]);
      expect(r.status).toBe(126);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`-r ${home}/private-bin`);
      expect(r.stderr).toMatch(/it is in the home directory/);
      const granted = confine(['-d', project, '-r', bin, `${bin}/tool`]);
      expect(granted.stdout).toBe('tool ran\n');
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });

  test.each([
    ['Landlock alone', LANDLOCK_ONLY],
    ['with the hardening layers', {}],
  ])('a script whose interpreter is missing: 126, naming the interpreter (%s)', (_label, modeEnv) => {
    userFile(path.join(project, 'bad-interp.sh'), '#!/nonexistent/interp\necho hi\n', 0o755);
    const r = confine(['-d', project, './bad-interp.sh'], { env: modeEnv });
    expect(r.status).toBe(126);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/cannot run '.*bad-interp\.sh' confined: no such file or directory \(ENOENT\): its interpreter \/nonexistent\/interp is missing/);
  });

  test('a script whose interpreter is in the home directory: 126 before it runs, with what to do', () => {
    const dir = path.join(home, 'interp-bin');
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync('/bin/sh', path.join(dir, 'mysh'));
    fs.chmodSync(path.join(dir, 'mysh'), 0o755);
    fs.chownSync(dir, user!.uid, user!.gid);
    userFile(path.join(project, 'home-interp.sh'), `#!${dir}/mysh\necho interpreted\n`, 0o755);
    try {
      const r = confine(['-d', project, './home-interp.sh']);
      expect(r.status).toBe(126);
      expect(r.stderr).toMatch(new RegExp(`its interpreter ${dir}/mysh is in the home directory.*-r ${dir}`));
      expect(confine(['-d', project, '-r', dir, './home-interp.sh']).stdout).toBe('interpreted\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('-v says which Landlock ABI is enforced and lists the grants', () => {
    const r = confine(['-v', '-d', project, 'true'], { env: LANDLOCK_ONLY });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/Landlock ABI \d+ enforced/);
    expect(r.stderr).toMatch(/scoped: signals, abstract unix sockets/);
    expect(r.stderr).toMatch(/write \/tmp +temporary files/);
    expect(r.stderr).toMatch(/read +~\/\.gitconfig +git's configuration/);
    expect(r.stderr).toContain(`write ${project}`);
    expect(r.stderr).toMatch(/as the command itself \(execve\)/);
  });
});

describe('arb confine: what the command gets', () => {
  let project: string;
  beforeAll(() => {
    if (haveUser) project = userDir('gets');
  });

  test('CLAUDE_CODE_SANDBOXED=1 and the rest of the environment', () => {
    const r = confine(['-d', project, 'sh', '-c', 'echo "$CLAUDE_CODE_SANDBOXED $HOME $MY_VAR"'], { env: { MY_VAR: 'kept' } });
    expect(r.stdout).toBe(`1 ${home} kept\n`);
  });

  test.each([
    ['Landlock alone', LANDLOCK_ONLY],
    ['with the hardening layers', {}],
  ])('no descriptor beyond 0, 1, 2 reaches the command (%s)', (_label, modeEnv) => {
    // fd 20 is open in the shell that starts arb and, without confine's care, would be
    // inherited (Node marks only 0-15 close-on-exec at start-up).
    const baseline = userShell('exec 20</etc/passwd; sh -c "ls /proc/\\$\\$/fd"');
    expect(baseline.stdout.split('\n')).toContain('20');
    const r = userShell(`exec 20</etc/passwd; node "$CLI" confine -d ${project} sh -c 'ls /proc/$$/fd'`, { env: modeEnv });
    expect(r.stdout).toBe('0\n1\n2\n');
  });

  test('the standard streams are the caller’s, blocking, and SIGPIPE is default (yes | head works)', () => {
    const r = confine(['-d', project, 'sh', '-c', 'yes | head -n 2; echo "in:$(cat)"'], { input: 'from stdin' });
    expect(r.stdout).toBe('y\ny\nin:from stdin\n');
    expect(r.status).toBe(0);
  });

  test('exec mode: confine becomes the command (same pid)', () => {
    const r = userShell(`node "$CLI" confine -d ${project} sh -c 'echo inner=$$' & echo outer=$!; wait`, { env: LANDLOCK_ONLY });
    const outer = /outer=(\d+)/.exec(r.stdout)?.[1];
    const inner = /inner=(\d+)/.exec(r.stdout)?.[1];
    expect(outer).toBeDefined();
    expect(inner).toBe(outer);
  });

  test.each([
    ['Landlock alone (exec)', LANDLOCK_ONLY],
    ['with the hardening layers (wait)', {}],
  ])('the exit status is the command’s, 128+N for a signal (%s)', (_label, modeEnv) => {
    expect(confine(['-d', project, 'sh', '-c', 'exit 42'], { env: modeEnv }).status).toBe(42);
    expect(confine(['-d', project, 'true'], { env: modeEnv }).status).toBe(0);
    const killed = userShell(`node "$CLI" confine -d ${project} sh -c 'kill -TERM $$'; echo status=$?`, { env: modeEnv });
    expect(killed.stdout).toBe('status=143\n');
  });
});

describe('arb confine: forks', () => {
  let source: string;
  beforeAll(() => {
    if (!haveUser) return;
    const parent = userDir('forks');
    source = userDir('proj', parent);
    userFile(path.join(source, 'file.txt'), 'original\n');
  });

  test('forks the working directory, says where, runs there; the directory itself is untouched', () => {
    const r = confine(['-n', 'one', 'sh', '-c', 'pwd; cat file.txt; echo changed > file.txt; echo new > new.txt; echo x > ../outside.txt'], {
      cwd: source,
    });
    const fork = `${source}.one`;
    expect(r.stdout).toBe(`${fork}\noriginal\n`);
    expect(r.stderr).toContain(`forked ${source} to ${fork}`);
    expect(r.stderr).toMatch(/outside\.txt: (Permission denied|Read-only file system)/);
    expect(r.status).not.toBe(0);
    expect(fs.readFileSync(path.join(fork, 'file.txt'), 'utf8')).toBe('changed\n');
    expect(fs.readFileSync(path.join(source, 'file.txt'), 'utf8')).toBe('original\n');
    expect(fs.existsSync(path.join(source, 'new.txt'))).toBe(false);
    expect(fs.existsSync(path.join(path.dirname(source), '.' + path.basename(source) + '.one.base'))).toBe(true);
  });

  test('the original directory and the other forks are not writable from a fork', () => {
    const r = confine(['-n', 'two', 'sh', '-c', `echo x > ${source}/hack.txt; echo x > ${source}.one/hack.txt`], { cwd: source, env: LANDLOCK_ONLY });
    expect(r.stderr).toMatch(new RegExp(`${source}/hack.txt: Permission denied`));
    expect(r.stderr).toMatch(new RegExp(`${source}.one/hack.txt: Permission denied`));
    expect(fs.existsSync(`${source}/hack.txt`)).toBe(false);
  });

  test('a command not found makes no fork', () => {
    const before = siblings(source);
    const r = confine(['no-such-command-xyz'], { cwd: source });
    expect(r.status).toBe(127);
    expect(siblings(source)).toEqual(before);
  });

  test.each([
    ['Landlock alone', LANDLOCK_ONLY],
    ['with the hardening layers', {}],
  ])('--rm waits, removes the fork and its base, and exits as the command did (%s)', (_label, modeEnv) => {
    const before = siblings(source);
    const ok = confine(['--rm', 'sh', '-c', 'pwd; mkdir -p ro/sub; touch ro/sub/f; chmod 500 ro/sub ro; exit 7'], { cwd: source, env: modeEnv });
    expect(ok.status).toBe(7);
    const fork = ok.stdout.trim();
    expect(fork.startsWith(`${source}.`)).toBe(true);
    expect(fs.existsSync(fork)).toBe(false);
    expect(siblings(source)).toEqual(before);
    const killed = confine(['--rm', 'sh', '-c', 'kill -KILL $$'], { cwd: source, env: modeEnv });
    expect(killed.status).toBe(128 + 9);
    expect(siblings(source)).toEqual(before);
  });

  test('--rm passes SIGTERM sent to confine on to the command, then cleans up', () => {
    const fork = `${source}.sig`;
    userFile(
      path.join(source, 'on-term.py'),
      "import signal, sys, time\nsignal.signal(signal.SIGTERM, lambda *a: (print('got TERM', flush=True), sys.exit(5)))\nopen('ready', 'w').close()\ntime.sleep(30)\n",
    );
    const script = [
      'node "$CLI" confine -n sig --rm -- python3 on-term.py & pid=$!',
      `for i in $(seq 100); do [ -e ${fork}/ready ] && break; sleep 0.1; done`,
      'kill -TERM $pid',
      'wait $pid; echo status=$?',
    ].join('\n');
    const r = userShell(script, { cwd: source });
    expect(r.stdout).toBe('got TERM\nstatus=5\n');
    expect(fs.existsSync(fork)).toBe(false);
  });

  test.each([
    ['Landlock alone', LANDLOCK_ONLY],
    ['with the hardening layers', {}],
  ])('what the command leaves running, detached or not, does not outlive confine when it waits (%s)', (_label, modeEnv) => {
    const tag = `${process.pid}${Date.now() % 100000}`;
    const r = confine(['--rm', 'sh', '-c', `(setsid sleep 9${tag} &); sleep 8${tag} & echo started; exit 4`], { cwd: source, env: modeEnv });
    expect(r.stdout).toBe('started\n');
    expect(r.status).toBe(4);
    const left = asUser('pgrep', ['-f', `sleep [89]${tag}`]);
    expect(left.stdout).toBe('');
    if (modeEnv === LANDLOCK_ONLY) {
      // Becoming the command (no --rm), it cannot: confine says so.
      const said = confine(['-d', source, 'true'], { env: LANDLOCK_ONLY });
      expect(said.stderr).toMatch(/what the command leaves running outlives it unless confine waits for it \(--rm\)/);
    }
  });

  test('--rm with -d is refused: there is no fork to remove', () => {
    const r = confine(['--rm', '-d', source, 'true']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--rm removes the fork/);
  });
});

describe('arb confine: refusals', () => {
  let project: string;
  beforeAll(() => {
    if (haveUser) project = userDir('refuse');
  });

  test.each([
    ['1', /ABI 1\) is too old: confine needs ABI 2 \(Linux 5\.19\)/],
    ['ENOSYS', /this kernel has no Landlock/],
    ['EOPNOTSUPP', /Landlock is built into this kernel but turned off.*lsm=/],
  ])('Landlock %s: refuses, says why and what would fix it, runs nothing, forks nothing', (abi, message) => {
    const before = siblings(project);
    const r = confine(['sh', '-c', `touch ${project}/ran`], { cwd: project, env: { ARB_TEST_LANDLOCK_ABI: abi } });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(fs.existsSync(path.join(project, 'ran'))).toBe(false);
    expect(siblings(project)).toEqual(before);
  });

  test('the home directory itself is refused, as -d and as the directory to fork', () => {
    const d = confine(['-d', home, 'true']);
    expect(d.status).toBe(2);
    expect(d.stderr).toContain(`-d ${home} is the home directory`);
    const cwd = confine(['true'], { cwd: home });
    expect(cwd.status).toBe(2);
    expect(cwd.stderr).toMatch(/the working directory is the home directory/);
    expect(fs.readdirSync(path.dirname(home)).filter((n) => n.startsWith(`${user!.name}.`) || n.startsWith(`.${user!.name}.`))).toEqual([]);
  });

  test('-d on a missing directory: a clear error', () => {
    const r = confine(['-d', path.join(project, 'missing'), 'true']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/cannot use '.*missing': no such file or directory \(ENOENT\)/);
  });
});
