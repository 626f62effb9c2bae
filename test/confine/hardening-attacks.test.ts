// The ways around Landlock that confine's hardening closes (issue 6), tried as a hostile command
// would, as the unprivileged test user, in both modes: with namespaces (the default where they
// work, as here) and with Landlock alone (ARB_CONFINE_NO_NAMESPACES=1, as on a machine without
// user namespaces). Each denial is paired with an access that works, and asserts the errno. What
// the man page documents as not holding with Landlock alone is asserted as not holding there.
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

import { landlockAbi } from '../../src/native';
import { CLI, REPO_ROOT, itIf, probe as probeScript, testEnv } from '../helpers/env';
import { RunResult, arbAsUser, asUser } from '../helpers/run';

const env = testEnv();
const user = env.user;
const home = user?.home ?? `/home/${process.env.ARB_TEST_USER || 'arbtest'}`;
const haveUser = Boolean(user && env.userWork);
const anyMode = itIf(haveUser, env.userMissing ?? 'no test user');
// The namespace mode needs unprivileged user namespaces, which some machines turn off: there the
// tests of that mode are skipped with the reason (and fail under CI, where they must run).
const nsWorks = haveUser && asUser('unshare', ['-Urmpf', '--mount-proc', 'true']).status === 0;
const nsOnly = itIf(haveUser && nsWorks, haveUser ? 'unprivileged user namespaces do not work here (unshare -Urmpf fails as the test user)' : env.userMissing);
let test = anyMode;
const PROBE = probeScript('hardening-probe.py');
const ABI = landlockAbi();
const TOKEN = `FAKE-CMDLINE-TOKEN-${process.pid}`;

const MODES: [string, Record<string, string>][] = [
  ['namespaces', {}],
  ['Landlock alone', { ARB_CONFINE_NO_NAMESPACES: '1' }],
];

// --- the stage: a project, files and listeners outside it --------------------------------------

let area = '';
let project = '';
let outsideFile = '';
let tmpArea = '';
let tmpProject = '';
let tmpExtra = '';
let xdg = '';
let madeXdg = false;
const sockets = { home: '', tmp: '', xdg: '', tmpdir: '', elsewhere: '' };
let tmpdir = '';
const abstractName = `arb-hardening-${process.pid}`;
let listener: ChildProcess | undefined;
let listenerOut = '';
let listenerPid = 0;
let tcpPort = 0;
let udpPort = 0;
let otherTerminal = '';

function own(p: string, mode?: number): void {
  fs.chownSync(p, user!.uid, user!.gid);
  if (mode !== undefined) fs.chmodSync(p, mode);
}

function userDir(p: string): string {
  fs.mkdirSync(p, { recursive: true });
  own(p, 0o755);
  return p;
}

function userFile(p: string, content = 'x\n', mode = 0o644): string {
  fs.writeFileSync(p, content);
  own(p, mode);
  return p;
}

// Listens, as the user, on an abstract socket, on TCP and UDP on 127.0.0.1; prints what UDP gets.
// Holds a terminal open (another terminal of the user, with a line typed in it). Its command line
// carries a token, as a process given a secret on its command line would.
const LISTENER = `
import os, socket, sys, threading, time
servers = []
a = socket.socket(socket.AF_UNIX); a.bind('\\0' + sys.argv[1]); a.listen(16); servers.append(a)
t = socket.socket(); t.bind(('127.0.0.1', 0)); t.listen(16); servers.append(t)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', 0))
def accept(s):
    while True:
        c, _ = s.accept(); c.close()
for s in servers: threading.Thread(target=accept, args=(s,), daemon=True).start()
def udp():
    while True:
        d, _ = u.recvfrom(200); print('udp', d.decode(errors='replace'), flush=True)
threading.Thread(target=udp, daemon=True).start()
m, sl = os.openpty()
os.write(m, b'typed-in-another-terminal\\n')
print('ready', os.getpid(), t.getsockname()[1], u.getsockname()[1], os.ttyname(sl), flush=True)
time.sleep(900)
`;

beforeAll(async () => {
  if (!haveUser) return;
  area = userDir(`${env.userWork}-hardening-${process.pid}`);
  project = userDir(path.join(area, 'project'));
  userFile(path.join(project, 'file.txt'));
  outsideFile = userFile(path.join(area, 'outside.txt'), 'outside\n', 0o644);
  tmpArea = userDir(`/tmp/arb-hardening-${process.pid}`);
  tmpProject = userDir(path.join(tmpArea, 'project'));
  tmpExtra = userDir(path.join(tmpArea, 'extra'));
  userFile(path.join(tmpArea, 'other.txt'), 'another program\'s file in /tmp\n');
  xdg = `/run/user/${user!.uid}`;
  if (!fs.existsSync(xdg)) {
    fs.mkdirSync(xdg, { recursive: true });
    madeXdg = true;
  }
  own(xdg, 0o700);
  sockets.home = path.join(home, '.gnupg', `S.hardening-${process.pid}`);
  sockets.tmp = path.join(tmpArea, 'agent.sock');
  sockets.xdg = path.join(xdg, `bus-${process.pid}`);
  tmpdir = userDir(`/var/tmp/arb-hardening-tmpdir-${process.pid}`);
  sockets.tmpdir = path.join(tmpdir, 'ssh-agent.sock');
  // A daemon's socket elsewhere on the host (as /dev/log, or one under /var/lib): nothing hides it.
  sockets.elsewhere = path.join(area, 'daemon.sock');

  listener = spawn('runuser', ['-u', user!.name, '--', 'python3', '-c', LISTENER, abstractName, TOKEN], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  listener.stdout!.on('data', (d: Buffer) => {
    listenerOut += d.toString();
  });
  const deadline = Date.now() + 10_000;
  while (!/^ready /m.test(listenerOut)) {
    if (Date.now() > deadline) throw new Error(`the listener did not start: ${listenerOut}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const m = /^ready (\d+) (\d+) (\d+) (\S+)$/m.exec(listenerOut)!;
  [listenerPid, tcpPort, udpPort] = [Number(m[1]), Number(m[2]), Number(m[3])];
  otherTerminal = m[4];
});

/**
 * Unix sockets the user's agents would have (gpg-agent in ~/.gnupg, ssh-agent in /tmp, D-Bus in
 * $XDG_RUNTIME_DIR), made just before use: other test runs on this machine remake the home
 * directory. Connecting needs only the listen backlog, not an accept.
 */
async function agentSockets(): Promise<net.Server[]> {
  const gnupg = path.join(home, '.gnupg');
  fs.mkdirSync(gnupg, { recursive: true });
  own(gnupg, 0o700);
  const servers: net.Server[] = [];
  for (const p of [sockets.home, sockets.tmp, sockets.xdg, sockets.tmpdir, sockets.elsewhere]) {
    fs.rmSync(p, { force: true });
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(p, resolve));
    own(p);
    servers.push(server);
  }
  return servers;
}

afterAll(() => {
  listener?.kill('SIGKILL');
  if (listenerPid) {
    try {
      process.kill(listenerPid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const p of [area, tmpArea, tmpdir, sockets.home, sockets.xdg]) if (p) fs.rmSync(p, { recursive: true, force: true });
  if (madeXdg) fs.rmSync(xdg, { recursive: true, force: true });
});

// --- running the probe confined ----------------------------------------------------------------

interface Probe {
  r: RunResult;
  results: Record<string, string>;
}

function parse(stdout: string): Record<string, string> {
  const results: Record<string, string> = {};
  for (const line of stdout.replace(/\r/g, '').split('\n')) {
    const m = /^(\S+) (.*?) -> (.*)$/.exec(line);
    if (m) results[m[2] === '' ? m[1] : `${m[1]}:${m[2]}`] = m[3];
  }
  return results;
}

function probe(modeEnv: Record<string, string>, confineArgs: string[], ops: string[]): Probe {
  const r = arbAsUser(['confine', ...confineArgs, '--', 'python3', PROBE, ...ops], { env: { XDG_RUNTIME_DIR: xdg, ...modeEnv } });
  if (r.status !== 0) throw new Error(`confine failed (${r.status}): ${r.stderr}`);
  return { r, results: parse(r.stdout) };
}

/** The answers for `ops`, as one object, so that a failure shows every mismatch at once. */
function answers(p: Probe, ops: string[]): Record<string, string | undefined> {
  return Object.fromEntries(ops.map((op) => [op, p.results[op]]));
}

const nsMode = (modeEnv: Record<string, string>) => modeEnv.ARB_CONFINE_NO_NAMESPACES === undefined;

describe.each(MODES)('arb confine hardening (%s)', (mode, modeEnv) => {
  const ns = nsMode(modeEnv);
  test = ns ? nsOnly : anyMode;

  test(ns ? 'says nothing about its layers on stderr' : 'says once on stderr that it runs with Landlock alone, and what that leaves open', () => {
    const p = probe(modeEnv, ['-d', project], ['pids']);
    const said = p.r.stderr.split('\n').filter((l) => /Landlock alone/.test(l));
    if (ns) {
      expect(p.r.stderr).toBe('');
    } else {
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(ABI < 9 ? /unix sockets anywhere stay reachable \(ssh-agent, D-Bus and Docker in \/run, \/tmp and \$XDG_RUNTIME_DIR, gpg-agent in the home directory\).*re-permissioned.*command lines are visible/ : /re-permissioned.*command lines are visible/);
      if (ABI >= 9) expect(said[0]).not.toMatch(/unix sockets/);
    }
  });

  test(ns ? 'pathname unix sockets in the home, /tmp, $XDG_RUNTIME_DIR and $TMPDIR are gone (ENOENT), one elsewhere stays reachable below Landlock ABI 9 (documented); its own socket works' : 'pathname unix sockets outside stay reachable below Landlock ABI 9 (documented); its own socket works', async () => {
    const ops = [`unix:${sockets.home}`, `unix:${sockets.tmp}`, `unix:${sockets.xdg}`, `unix:${sockets.tmpdir}`, `unix:${sockets.elsewhere}`, `unixown:${project}/own.sock`, `write:${tmpdir}/scratch`];
    const servers = await agentSockets();
    const p = probe({ ...modeEnv, TMPDIR: tmpdir }, ['-d', project], ops);
    for (const s of servers) s.close();
    const outside = ns ? 'ENOENT' : ABI >= 9 ? 'EACCES' : 'OK';
    expect(answers(p, ops)).toEqual({
      [`unix:${sockets.home}`]: outside,
      [`unix:${sockets.tmp}`]: outside,
      [`unix:${sockets.xdg}`]: outside,
      [`unix:${sockets.tmpdir}`]: outside,
      [`unix:${sockets.elsewhere}`]: ABI >= 9 ? 'EACCES' : 'OK',
      [`unixown:${project}/own.sock`]: 'OK',
      [`write:${tmpdir}/scratch`]: 'OK',
    });
    // With namespaces $TMPDIR is private: what the command left there is gone.
    expect(fs.existsSync(path.join(tmpdir, 'scratch'))).toBe(!ns);
  });

  test(ns ? '/tmp is private: other programs\' files there are gone, writable paths under /tmp stay writable' : '/tmp is shared (documented): writable paths under /tmp are writable', () => {
    const tag = ns ? 'ns' : 'll';
    const ops = [`read:${tmpArea}/other.txt`, `write:${tmpProject}/new-${tag}.txt`, `write:${tmpExtra}/new-${tag}.txt`, `write:/tmp/scratch-${process.pid}.txt`, `write:${area}/nope.txt`];
    const p = probe(modeEnv, ['-d', tmpProject, '-w', tmpExtra], ops);
    expect(answers(p, ops)).toEqual({
      [`read:${tmpArea}/other.txt`]: ns ? 'ENOENT' : 'OK',
      [`write:${tmpProject}/new-${tag}.txt`]: 'OK',
      [`write:${tmpExtra}/new-${tag}.txt`]: 'OK',
      [`write:/tmp/scratch-${process.pid}.txt`]: 'OK',
      [`write:${area}/nope.txt`]: ns ? 'EROFS' : 'EACCES',
    });
    expect(fs.readFileSync(path.join(tmpProject, `new-${tag}.txt`), 'utf8')).toBe('x');
    expect(fs.existsSync(`/tmp/scratch-${process.pid}.txt`)).toBe(!ns);
    fs.rmSync(`/tmp/scratch-${process.pid}.txt`, { force: true });
  });

  test('what it needs stays writable and usable: the project, caches, /var/tmp, /tmp, /dev/shm, /dev/null, new pseudo-terminals', () => {
    const ops = [`write:${project}/w.txt`, `write:${home}/.cache/hardening-${process.pid}`, `write:/var/tmp/arb-hardening-${process.pid}`, `write:/tmp/arb-hardening-${process.pid}.txt`, `write:/dev/shm/arb-hardening-${process.pid}`, 'write:/dev/null', `read:${home}/.gitconfig`];
    const p = probe(modeEnv, ['-d', project], ops);
    expect(answers(p, ops)).toEqual(Object.fromEntries(ops.map((op) => [op, 'OK'])));
    fs.rmSync(`${home}/.cache/hardening-${process.pid}`, { force: true });
    fs.rmSync(`/tmp/arb-hardening-${process.pid}.txt`, { force: true });
    fs.rmSync(`/var/tmp/arb-hardening-${process.pid}`, { force: true });
    if (!ns) fs.rmSync(`/dev/shm/arb-hardening-${process.pid}`, { force: true });
    const pty = arbAsUser(['confine', '-d', project, '--', 'python3', '-c', 'import os; m, s = os.openpty(); os.write(s, b"hi"); print(os.read(m, 2).decode())'], { env: modeEnv });
    expect(pty.stdout.trim()).toBe('hi');
  });

  test(ns ? 'metadata outside the writable paths cannot change (EROFS), and really has not; inside it can' : 'metadata outside the writable paths can change with Landlock alone (documented); inside it can', () => {
    const before = fs.statSync(outsideFile);
    const ops = [`chmod:600:${outsideFile}`, `utime:${outsideFile}`, `chmod:600:${project}/file.txt`, `utime:${project}/file.txt`];
    const p = probe(modeEnv, ['-d', project], ops);
    expect(answers(p, ops)).toEqual({
      [`chmod:600:${outsideFile}`]: ns ? 'EROFS' : 'OK',
      [`utime:${outsideFile}`]: ns ? 'EROFS' : 'OK',
      [`chmod:600:${project}/file.txt`]: 'OK',
      [`utime:${project}/file.txt`]: 'OK',
    });
    const after = fs.statSync(outsideFile);
    if (ns) {
      expect(after.mode).toBe(before.mode);
      expect(after.mtimeMs).toBe(before.mtimeMs);
    } else {
      expect(after.mode & 0o777).toBe(0o600);
      own(outsideFile, 0o644);
    }
    expect(fs.statSync(path.join(project, 'file.txt')).mode & 0o777).toBe(0o600);
  });

  if (ns) {
    test('chmod 777 ~, chmod 000 ~/.ssh/id_ed25519, touching ~/.gitconfig: refused, and nothing changed', () => {
      const key = path.join(home, '.ssh', 'id_ed25519');
      const before = [home, key, path.join(home, '.gitconfig')].map((f) => fs.statSync(f));
      const ops = [`chmod:777:${home}`, `chmod:000:${key}`, `chmod:666:${home}/.gitconfig`, `utime:${home}/.gitconfig`, `read:${key}`];
      const p = probe(modeEnv, ['-d', project], ops);
      // The key is not even there: the home directory is an empty tmpfs with the readable and
      // writable paths bound back.
      expect(answers(p, ops)).toEqual({
        [`chmod:777:${home}`]: 'EROFS',
        [`chmod:000:${key}`]: 'ENOENT',
        [`chmod:666:${home}/.gitconfig`]: 'EROFS',
        [`utime:${home}/.gitconfig`]: 'EROFS',
        [`read:${key}`]: 'ENOENT',
      });
      const after = [home, key, path.join(home, '.gitconfig')].map((f) => fs.statSync(f));
      expect(after.map((s) => [s.mode, s.mtimeMs])).toEqual(before.map((s) => [s.mode, s.mtimeMs]));
    });
  }

  if (ns) {
    test("the user's other terminals are gone (ENOENT): it cannot read what is typed there; its own is at /dev/console", () => {
      expect(otherTerminal).toMatch(/^\/dev\/pts\/\d+$/);
      const ops = [`read:${otherTerminal}`];
      const p = probe(modeEnv, ['-d', project], ops);
      expect(answers(p, ops)).toEqual({ [`read:${otherTerminal}`]: 'ENOENT' });
      const harness = 'import os, pty, sys\npid, fd = pty.fork()\nif pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\nout = b""\nwhile True:\n    try: b = os.read(fd, 4096)\n    except OSError: break\n    if not b: break\n    out += b\nos.waitpid(pid, 0)\nsys.stdout.write(out.decode(errors="replace"))';
      const inner = 'import os; m, s = os.openpty(); print("own", os.ttyname(0), "new", os.ttyname(s))';
      const r = asUser('python3', ['-c', harness, process.execPath, CLI, 'confine', '-d', project, '--', 'python3', '-c', inner]);
      expect(r.stdout).toMatch(/own \/dev\/console new \/dev\/pts\/\d+/);
    });
  }

  test(ns ? 'what runs outside later stays read-only in the writable caches: ~/.cargo/bin on $PATH, ~/.cargo/env (EROFS); the cache itself is writable' : 'with Landlock alone ~/.cargo/bin and ~/.cargo/env stay writable (documented)', () => {
    const cargo = path.join(home, '.cargo');
    userDir(cargo);
    userDir(path.join(cargo, 'bin'));
    userDir(path.join(cargo, 'registry'));
    const envFile = userFile(path.join(cargo, 'env'), '# rustup: sourced by ~/.profile\n');
    const ops = [`write:${cargo}/bin/git`, `write:${envFile}`, `write:${cargo}/registry/cached`];
    const p = probe({ ...modeEnv, PATH: `${cargo}/bin:/usr/bin:/bin` }, ['-d', project], ops);
    expect(answers(p, ops)).toEqual({
      [`write:${cargo}/bin/git`]: ns ? 'EROFS' : 'OK',
      [`write:${envFile}`]: ns ? 'EROFS' : 'OK',
      [`write:${cargo}/registry/cached`]: 'OK',
    });
    expect(fs.readFileSync(envFile, 'utf8')).toBe(ns ? '# rustup: sourced by ~/.profile\n' : '# rustup: sourced by ~/.profile\nx');
    fs.rmSync(path.join(cargo, 'bin', 'git'), { force: true });
  });

  test(ns ? 'whatever PATH is and whether they exist yet or not, the caches table stays read-only: rustup toolchains and settings, cargo bin and config, npx packages (EROFS); their caches stay writable' : 'with Landlock alone the caches table stays writable (documented)', () => {
    const cargo = userDir(path.join(home, '.cargo'));
    const rustup = userDir(path.join(home, '.rustup'));
    const npm = userDir(path.join(home, '.npm'));
    userDir(path.join(rustup, 'toolchains'));
    const settings = userFile(path.join(rustup, 'settings.toml'), 'default_toolchain = "stable"\n');
    for (const f of ['config', 'config.toml']) fs.rmSync(path.join(cargo, f), { force: true });
    fs.rmSync(path.join(npm, '_npx'), { recursive: true, force: true });
    const ops = [
      `write:${cargo}/bin/planted`,
      `write:${cargo}/config`,
      `write:${cargo}/config.toml`,
      `write:${cargo}/registry/ok`,
      `write:${rustup}/toolchains/planted`,
      `write:${settings}`,
      `write:${rustup}/downloads/ok`,
      `write:${npm}/_npx/planted`,
      `write:${npm}/_cacache-ok`,
    ];
    try {
      // Not on PATH: protected all the same.
      const p = probe({ ...modeEnv, PATH: '/usr/bin:/bin' }, ['-d', project], ops);
      const denied = ns ? 'EROFS' : 'OK';
      expect(answers(p, ops)).toEqual({
        [`write:${cargo}/bin/planted`]: denied,
        [`write:${cargo}/config`]: denied,
        [`write:${cargo}/config.toml`]: denied,
        [`write:${cargo}/registry/ok`]: 'OK',
        [`write:${rustup}/toolchains/planted`]: denied,
        [`write:${settings}`]: denied,
        [`write:${rustup}/downloads/ok`]: 'OK',
        [`write:${npm}/_npx/planted`]: denied,
        [`write:${npm}/_cacache-ok`]: 'OK',
      });
      expect(fs.existsSync(path.join(cargo, 'config'))).toBe(!ns);
    } finally {
      for (const f of [`${cargo}/bin/planted`, `${cargo}/config`, `${cargo}/config.toml`, `${cargo}/registry/ok`, `${rustup}/toolchains/planted`, `${rustup}/downloads/ok`, `${npm}/_npx/planted`, `${npm}/_cacache-ok`]) fs.rmSync(f, { force: true });
    }
  });

  test(ns ? "other processes are invisible: no /proc/PID of the user's other processes, no tokens on their command lines, no pid to signal" : "other processes' command lines stay readable with Landlock alone (documented); signals stay scoped", () => {
    const find = `findcmdline:${Buffer.from(TOKEN).toString('hex')}`;
    const ops = [`cmdline:${listenerPid}`, find, `kill:${listenerPid}`, 'cmdline:self', 'pids'];
    const p = probe(modeEnv, ['-d', project], ops);
    const a = answers(p, ops);
    expect(a['cmdline:self']).toMatch(/^OK .*hardening-probe\.py/);
    if (ns) {
      expect(a[`cmdline:${listenerPid}`]).toBe('ENOENT');
      expect(a[find]).toBe('ENOENT');
      expect(a[`kill:${listenerPid}`]).toBe('ESRCH');
      // init and the command itself
      expect(Number(a.pids?.split(' ')[1])).toBeLessThanOrEqual(3);
    } else {
      expect(a[`cmdline:${listenerPid}`]).toContain(TOKEN);
      expect(a[find]).toMatch(/^OK \d+$/);
      expect(a[`kill:${listenerPid}`]).toBe(ABI >= 6 ? 'EPERM' : 'OK');
    }
  });

  test('signals and abstract sockets outside are scoped (issue 6 item 1, ABI 6): its own work', () => {
    const ops = [`abstract:${abstractName}`, 'kill:1', `kill:${listenerPid}`];
    const p = probe(modeEnv, ['-d', project], ops);
    const a = answers(p, ops);
    expect(a[`abstract:${abstractName}`]).toBe(ABI >= 6 ? 'EPERM' : 'OK');
    if (ns) {
      // PID 1 is the namespace's init: the user's own process, but outside the Landlock domain.
      expect(a['kill:1']).toBe(ABI >= 6 ? 'EPERM' : 'OK');
      expect(a[`kill:${listenerPid}`]).toBe('ESRCH');
    } else {
      expect(a[`kill:${listenerPid}`]).toBe(ABI >= 6 ? 'EPERM' : 'OK');
    }
  });

  test('the terminal: TIOCSTI fails with EPERM, TIOCGWINSZ works (a pty as the controlling terminal)', () => {
    const harness = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
while True:
    try: b = os.read(fd, 4096)
    except OSError: break
    if not b: break
    out += b
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace'))
`;
    const ops = ['tiocsti', 'winsz'];
    // Without confine, the same user on the same terminal can type into it: the denial below is
    // confine's, not the kernel's (dev.tty.legacy_tiocsti).
    const legacy = fs.readFileSync('/proc/sys/dev/tty/legacy_tiocsti', 'utf8').trim() === '1';
    const bare = parse(asUser('python3', ['-c', harness, 'python3', PROBE, ...ops]).stdout);
    expect(bare).toEqual({ tiocsti: legacy ? 'OK' : 'EIO', winsz: 'OK' });
    const r = asUser('python3', ['-c', harness, process.execPath, CLI, 'confine', '-d', project, '--', 'python3', PROBE, ...ops], { env: modeEnv });
    expect(parse(r.stdout)).toEqual({ tiocsti: 'EPERM', winsz: 'OK' });
  });

  test('--no-network: no connection to a listener outside, over TCP or UDP; without it, the network is open', () => {
    const ops = [`tcp:127.0.0.1:${tcpPort}`, `udp:127.0.0.1:${udpPort}`, 'tcplisten'];
    const open = probe(modeEnv, ['-d', project], ops);
    expect(answers(open, ops)).toEqual(Object.fromEntries(ops.map((op) => [op, 'OK'])));

    const closed = probe(modeEnv, ['--no-network', '-d', project], [...ops, 'socket:AF_INET-UDP']);
    const a = answers(closed, [...ops, 'socket:AF_INET-UDP']);
    if (ns) {
      // Its own network namespace: 127.0.0.1 is its own loopback, where nothing listens.
      expect(a).toEqual({ [`tcp:127.0.0.1:${tcpPort}`]: 'ECONNREFUSED', [`udp:127.0.0.1:${udpPort}`]: 'OK', tcplisten: 'OK', 'socket:AF_INET-UDP': 'OK' });
      expect(closed.r.stderr).toBe('');
    } else {
      expect(a).toEqual({ [`tcp:127.0.0.1:${tcpPort}`]: 'EACCES', [`udp:127.0.0.1:${udpPort}`]: 'EACCES', tcplisten: 'EACCES', 'socket:AF_INET-UDP': 'EACCES' });
      expect(closed.r.stderr).toMatch(/--no-network without a network namespace.*still open: unix sockets outside/);
    }
  });

  test('--no-network: a datagram sent from inside never reaches the listener outside', async () => {
    const udpOps = [`udp:127.0.0.1:${udpPort}`];
    listenerOut = listenerOut.replace(/^udp .*$/gm, '');
    probe(modeEnv, ['-d', project], udpOps);
    await new Promise((r) => setTimeout(r, 300));
    expect(listenerOut).toMatch(/^udp hardening-udp$/m);
    listenerOut = listenerOut.replace(/^udp .*$/gm, '');
    probe(modeEnv, ['--no-network', '-d', project], udpOps);
    await new Promise((r) => setTimeout(r, 300));
    expect(listenerOut).not.toMatch(/^udp /m);
  });

  test('--explain says which layers are enforced and runs nothing', () => {
    const marker = path.join(project, `explained-${mode.replace(/\W/g, '')}`);
    const r = arbAsUser(['confine', '--explain', '-d', project, '--', 'touch', marker], { env: { XDG_RUNTIME_DIR: xdg, ...modeEnv } });
    expect(r.status).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);
    expect(r.stdout).toMatch(new RegExp(`Landlock ABI ${ABI}\\s+enforced`));
    expect(r.stdout).toMatch(/scopes\s+enforced: signals and abstract unix sockets/);
    expect(r.stdout).toMatch(/seccomp\s+enforced: ioctl TIOCSTI and TIOCLINUX denied/);
    expect(r.stdout).toMatch(ns ? /namespaces\s+enforced: user, mount, IPC, PID/ : /namespaces\s+NOT enforced: turned off by ARB_CONFINE_NO_NAMESPACES=1/);
    expect(r.stdout).toMatch(/It can read:[\s\S]*~\/\.gitconfig[\s\S]*It can write[\s\S]*the directory the command works in[\s\S]*It can reach:\n {2}network: open/);
    expect(r.stdout).toMatch(ns ? /processes: only its own/ : /processes: all of yours are visible in \/proc/);
    // What the namespaces hide of the unix sockets, and what they do not (the test above).
    if (ABI < 9) {
      expect(r.stdout).toMatch(
        ns ? /unix sockets\s+not checked by Landlock below ABI 9; the namespaces hide those in \/run, \$XDG_RUNTIME_DIR, \/tmp and the home directory, not those elsewhere/ : /unix sockets\s+NOT enforced/,
      );
    }
  });
});

describe('arb confine --explain', () => {
  test = anyMode;
  nsOnly('without a command, with --no-network: says what the network would be, forks nothing', () => {
    const siblings = () => fs.readdirSync(area).sort();
    const before = siblings();
    const r = arbAsUser(['confine', '--explain', '--no-network'], { cwd: project });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Works in: {2}a new fork of .*project, made next to it \(project\.N\)/);
    expect(r.stdout).toMatch(/network: loopback only/);
    expect(siblings()).toEqual(before);
    const alone = arbAsUser(['confine', '--explain', '--no-network', '--landlock-only'], { cwd: project });
    expect(alone.stdout).toMatch(/network: closed: TCP \(Landlock\) and every socket but unix sockets \(seccomp\); still open: unix sockets outside/);
  });

  test('below Landlock ABI 2 it says confine would refuse, and confine refuses: nothing runs unconfined', () => {
    const marker = path.join(project, 'refused');
    const r = arbAsUser(['confine', '--explain', '-d', project, '--', 'touch', marker], { env: { ARB_TEST_LANDLOCK_ABI: '1' } });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/confine would refuse to run here, and runs nothing unconfined:[\s\S]*ABI 1\) is too old/);
    const run = arbAsUser(['confine', '-d', project, '--', 'touch', marker], { env: { ARB_TEST_LANDLOCK_ABI: '1' } });
    expect(run.status).toBe(1);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe('the PID namespace: statuses and signals pass through init and the reaper', () => {
  test = nsOnly;
  test('an exit status and a death by signal come out as the command gave them', () => {
    expect(arbAsUser(['confine', '-d', project, '--', 'sh', '-c', 'exit 7']).status).toBe(7);
    const killed = arbAsUser(['confine', '-d', project, '--', 'sh', '-c', 'kill -TERM $$']);
    expect(killed.status).toBe(143);
  });

  test('Ctrl-C on the terminal reaches the command once', () => {
    const harness = `
import os, pty, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
def drain(until):
    global out
    while True:
        try: b = os.read(fd, 4096)
        except OSError: return False
        if not b: return False
        out += b
        if until in out: return True
drain(b'ready')
os.write(fd, b'\\x03')
drain(b'never')
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace'))
`;
    const inner = 'import signal, time\nn = 0\ndef h(s, f):\n    global n\n    n += 1\nsignal.signal(signal.SIGINT, h)\nprint("ready", flush=True)\ntime.sleep(1.5)\nprint("interrupts", n, flush=True)';
    const r = asUser('python3', ['-c', harness, process.execPath, CLI, 'confine', '-d', project, '--', 'python3', '-c', inner]);
    expect(r.stdout).toMatch(/interrupts 1/);
  });
});
