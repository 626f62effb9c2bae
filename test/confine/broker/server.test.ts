// The broker in this process, and shims as the command would run them (the built arb, called as
// gh from the directory put first on PATH): asking, running with the command's streams, the allow
// file, and requests that are garbage, too large, or from a shim that goes away.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

import type { Answer, Question } from '../../../src/confine/broker/ask';
import { FDS_MARKER, encodeFrame } from '../../../src/confine/broker/protocol';
import { Broker, startBroker } from '../../../src/confine/broker/server';
import { launcherPath, sendFds, unixConnect } from '../../../src/native';
import { CLI } from '../../helpers/env';
import { FakeGh, makeFakeGh } from './fake-gh';

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

let base: string;
let root: string;
let home: string;
let fake: FakeGh;
let broker: Broker;
let answers: Answer[];
let asked: string[];

/** Runs `gh ARGS` as the confined command would: found on its PATH, the shim first there. */
function gh(args: string[], options: { cwd?: string; input?: string; onSpawn?: (pid: number) => void } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn('gh', args, {
      cwd: options.cwd ?? path.join(root, 'sub'),
      // The shim is arb, run by the node on the command's PATH.
      env: broker.commandEnv({ PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, GH_TOKEN: 'from-the-command', TERM: 'dumb' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    if (child.pid !== undefined) options.onSpawn?.(child.pid);
    child.stdin.end(options.input ?? '');
  });
}

beforeEach(async () => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-broker-')));
  root = path.join(base, 'project');
  home = path.join(base, 'home');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.mkdirSync(home);
  fake = makeFakeGh(base);
  answers = [];
  asked = [];
  broker = (await startBroker({
    root,
    writable: [root, fake.logDir],
    home,
    env: { PATH: `${fake.bin}:/usr/bin:/bin`, HOME: home },
    // The fake gh is under /tmp, where confine never looks for a gh itself: so it is given.
    programs: { gh: path.join(fake.bin, 'gh') },
    cli: CLI,
    ask: async (q: Question) => {
      asked.push(q.argv.join(' '));
      return { answer: answers.shift() ?? 'no', by: 'CONFINE_ASK' };
    },
    log: () => undefined,
  })) as Broker;
});

afterEach(async () => {
  await broker.close();
  fs.rmSync(base, { recursive: true, force: true });
});

describe('the broker', () => {
  it('is a private directory with a short socket and a gh that is arb', () => {
    expect(broker.tools).toEqual(['gh']);
    expect(Buffer.byteLength(broker.socketPath)).toBeLessThan(104);
    expect(fs.statSync(broker.dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(broker.socketPath).mode & 0o777).toBe(0o600);
    expect(fs.statSync(broker.socketPath).isSocket()).toBe(true);
    expect(fs.readlinkSync(path.join(broker.shimDir, 'gh'))).toBe(CLI);
    const env = broker.commandEnv({ PATH: '/usr/bin' });
    expect(env).toEqual({ PATH: `${broker.shimDir}:/usr/bin`, CONFINE_SOCKET: broker.socketPath });
  });

  it('has a socket path that fits in sun_path whatever the directory', async () => {
    const deep = path.join(root, 'd'.repeat(100), 'e'.repeat(100), 'f'.repeat(100));
    fs.mkdirSync(deep, { recursive: true });
    const other = (await startBroker({ root: deep, writable: [deep], home, env: { PATH: fake.bin }, programs: { gh: path.join(fake.bin, 'gh') }, cli: CLI })) as Broker;
    try {
      expect(Buffer.byteLength(other.socketPath)).toBeLessThan(104);
    } finally {
      await other.close();
    }
  });

  it('is not started when gh is not installed', async () => {
    expect(await startBroker({ root, writable: [root, fake.logDir], home, env: { PATH: '/nonexistent' }, cli: CLI })).toBeUndefined();
  });

  it('runs gh when allowed once, where the command was, with its stdin and stdout', async () => {
    answers = ['once'];
    const r = await gh(['pr', 'view', '12'], { input: 'hello from the command' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`ran in ${path.join(root, 'sub')}`);
    expect(r.stdout).toContain('args: pr view 12');
    expect(r.stdout).toContain('stdin: hello from the command');
    expect(asked).toEqual(['gh pr view 12']);
    expect(fs.existsSync(path.join(home, '.config', 'confine', 'allow'))).toBe(false);
  });

  it("exits with gh's status and gives it the command's stderr", async () => {
    answers = ['once'];
    const r = await gh(['issue', 'list']);
    expect(r.status).toBe(3);
    expect(r.stderr).toBe('oops\n');
  });

  it('keeps "always" in ~/.config/confine/allow and does not ask again', async () => {
    answers = ['always'];
    expect((await gh(['pr', 'create', '--title', 'one'])).status).toBe(0);
    expect((await gh(['pr', 'create', '--title', 'two'])).status).toBe(0);
    expect(asked).toEqual(['gh pr create --title one']);
    expect(fake.calls().filter((l) => l.startsWith('start'))).toEqual(['start pr create --title one', 'start pr create --title two']);
    const allow = path.join(home, '.config', 'confine', 'allow');
    expect(fs.readFileSync(allow, 'utf8')).toMatch(/^gh pr create$/m);
    expect(fs.statSync(allow).mode & 0o777).toBe(0o600);
  });

  it('neither reads nor writes an allow file the command can write', async () => {
    const allow = path.join(home, '.config', 'confine', 'allow');
    fs.mkdirSync(path.dirname(allow), { recursive: true });
    fs.writeFileSync(allow, 'gh pr create\n');
    await broker.close();
    broker = (await startBroker({
      root,
      writable: [root, fake.logDir, path.join(home, '.config')],
      home,
      env: { PATH: `${fake.bin}:/usr/bin:/bin`, HOME: home },
      programs: { gh: path.join(fake.bin, 'gh') },
      cli: CLI,
      ask: async (q: Question) => {
        asked.push(`${q.argv.join(' ')} always=${q.offerAlways}`);
        return { answer: 'always', by: 'CONFINE_ASK' };
      },
      log: () => undefined,
    })) as Broker;
    expect((await gh(['pr', 'create'])).status).toBe(0);
    expect((await gh(['pr', 'list'])).status).toBe(0);
    expect(asked).toEqual(['gh pr create always=false', 'gh pr list always=false']);
    expect(fs.readFileSync(allow, 'utf8')).toBe('gh pr create\n');
  });

  it('does not run a gh, or programs on PATH, where the command can write', async () => {
    await broker.close();
    const inside = path.join(root, 'bin');
    fs.mkdirSync(inside);
    fs.writeFileSync(path.join(inside, 'git'), '#!/bin/sh\necho planted git\n', { mode: 0o755 });
    fs.copyFileSync(path.join(fake.bin, 'gh'), path.join(inside, 'gh'));
    fs.chmodSync(path.join(inside, 'gh'), 0o755);
    const start = (programs: Record<string, string>) =>
      startBroker({ root, writable: [root, fake.logDir], home, env: { PATH: `${inside}:bin:${fake.bin}:/usr/bin:/bin`, HOME: home }, programs, cli: CLI, ask: async () => ({ answer: 'once', by: 'CONFINE_ASK' }), log: () => undefined });
    broker = (await start({ gh: path.join(inside, 'gh') })) as Broker;
    const r = await gh(['pr', 'list']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is where the confined command can write, so it is not run outside');
    await broker.close();
    fs.writeFileSync(path.join(fake.bin, 'gh'), '#!/bin/sh\necho "PATH=$PATH"; git --version\n', { mode: 0o755 });
    broker = (await start({ gh: path.join(fake.bin, 'gh') })) as Broker;
    const r2 = await gh(['pr', 'list']);
    expect(r2.stdout).toBe(`PATH=${fake.bin}:/usr/bin:/bin\n${execFileSync('git', ['--version'], { encoding: 'utf8' })}`);
  });

  it("does not run gh where confine's launcher lies where the command can write (arb installed there)", async () => {
    await broker.close();
    const launcherDir = path.dirname(launcherPath());
    broker = (await startBroker({
      root,
      writable: [root, fake.logDir, launcherDir],
      home,
      env: { PATH: `${fake.bin}:/usr/bin:/bin`, HOME: home },
      programs: { gh: path.join(fake.bin, 'gh') },
      cli: CLI,
      ask: async () => ({ answer: 'once', by: 'CONFINE_ASK' }),
      log: () => undefined,
    })) as Broker;
    const r = await gh(['pr', 'list']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`confine's launcher ${launcherPath()} is where the confined command can write, so nothing is run outside with it`);
    expect(r.stdout).toBe('');
  });

  it('tells the command when it was not allowed, and does not run gh', async () => {
    answers = ['no'];
    const r = await gh(['pr', 'create', '--title', 'x']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("confine: not allowed: gh pr create --title x\n");
    expect(fake.calls()).toEqual([]);
  });

  it('never runs gh auth (and does not ask)', async () => {
    answers = ['always'];
    const r = await gh(['auth', 'token']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^confine: not allowed: gh auth token \(gh auth reads and changes your credentials: never run from a confined command\)\n$/);
    expect(asked).toEqual([]);
    expect(fake.calls()).toEqual([]);
  });

  it('asks about gh api every time, even after "always"', async () => {
    answers = ['always', 'always'];
    expect((await gh(['api', 'user'])).status).toBe(0);
    expect((await gh(['api', 'user'])).status).toBe(0);
    expect(asked).toEqual(['gh api user', 'gh api user']);
    expect(fs.existsSync(path.join(home, '.config', 'confine', 'allow'))).toBe(false);
  });

  it('runs gh only from inside the directory', async () => {
    answers = ['once'];
    const r = await gh(['pr', 'list'], { cwd: base });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`not allowed: gh pr list (gh runs only inside ${root})`);
    expect(asked).toEqual([]);
  });

  it("does not pass the command its own GH_TOKEN, and gives gh no pager or editor on the command's terminal", async () => {
    fs.writeFileSync(
      path.join(fake.bin, 'gh'),
      '#!/bin/sh\necho "token=${GH_TOKEN:-none} term=$TERM pager=$GH_PAGER/$PAGER/$GIT_PAGER editor=$GH_EDITOR/$EDITOR/$VISUAL/$GIT_EDITOR prompt=$GIT_TERMINAL_PROMPT"\n',
      { mode: 0o755 },
    );
    answers = ['once'];
    expect((await gh(['pr', 'list'])).stdout).toBe('token=none term=dumb pager=cat/cat/cat editor=false/false/false/false prompt=0\n');
  });

  it('gives gh your token as GH_TOKEN and a private copy of its settings, not its configuration directory', async () => {
    fs.mkdirSync(path.join(home, '.config', 'gh'), { recursive: true });
    fs.writeFileSync(path.join(home, '.config', 'gh', 'config.yml'), 'git_protocol: ssh\n');
    fs.writeFileSync(path.join(home, '.config', 'gh', 'hosts.yml'), 'github.com:\n  oauth_token: in-hosts\n');
    answers = ['once'];
    const r = await gh(['repo', 'view']);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const at = lines.findIndex((l) => l.startsWith('token='));
    const [first, ...files] = lines.slice(at);
    expect(first).toMatch(/^token=the-users-token config=\//);
    expect(first).not.toContain(path.join(home, '.config'));
    expect(files).toEqual(['config.yml']);
  });

  it('lets gh reach the ssh agent, but not through a socket the command could swap for a link to a key', async () => {
    fs.mkdirSync(path.join(home, '.ssh'));
    fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'KEY\n');
    const planted = path.join(root, 'agent.sock');
    fs.symlinkSync(path.join(home, '.ssh', 'id_ed25519'), planted);
    const outside = path.join(base, 'agent');
    fs.mkdirSync(outside);
    const server = net.createServer().listen(path.join(outside, 's'));
    await new Promise((r) => server.once('listening', r));
    try {
      type WithGrants = { toolGrants(program: string, env: Record<string, string>, writable: string[]): { path: string; access: string }[] };
      const grantsWith = async (sock: string) => {
        await broker.close();
        broker = (await startBroker({ root, writable: [root], home, env: { PATH: '/usr/bin:/bin', HOME: home, SSH_AUTH_SOCK: sock }, programs: { gh: path.join(fake.bin, 'gh') }, cli: CLI, log: () => undefined })) as Broker;
        return (broker as unknown as WithGrants).toolGrants(path.join(fake.bin, 'gh'), {}, [root]).map((g) => g.path);
      };
      const viaLink = await grantsWith(planted);
      expect(viaLink).not.toContain(path.join(home, '.ssh', 'id_ed25519'));
      expect(viaLink.some((p) => p.startsWith(path.join(home, '.ssh')))).toBe(false);
      expect(await grantsWith(path.join(outside, 's'))).toContain(path.join(outside, 's'));
    } finally {
      server.close();
    }
  });

  it('serves many requests in turn', async () => {
    answers = ['always'];
    expect((await gh(['pr', 'create', '--title', '0'])).status).toBe(0);
    const runs = await Promise.all([1, 2, 3].map((i) => gh(['pr', 'create', '--title', String(i)])));
    expect(runs.map((r) => r.status)).toEqual([0, 0, 0]);
    const calls = fake.calls();
    expect(calls).toHaveLength(8);
    for (let i = 0; i < calls.length; i += 2) {
      expect(calls[i].replace(/^start /, '')).toBe(calls[i + 1].replace(/^end /, ''));
    }
  });

  it('stops gh when the shim is killed mid-call', async () => {
    answers = ['once'];
    let shim = 0;
    const pending = gh(['run', 'watch'], { onSpawn: (pid) => (shim = pid) });
    const pidFile = `${fake.log}.pid`;
    for (let i = 0; i < 200 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    const ghPid = Number(fs.readFileSync(pidFile, 'utf8'));
    process.kill(shim, 'SIGKILL');
    await pending;
    let alive = true;
    for (let i = 0; i < 100 && alive; i++) {
      await new Promise((r) => setTimeout(r, 50));
      try {
        process.kill(ghPid, 0);
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
    // And the broker goes on serving.
    answers = ['once'];
    expect((await gh(['pr', 'list'])).status).toBe(0);
  });

  it('when closed, stops a running gh and leaves nothing behind', async () => {
    answers = ['once'];
    const pending = gh(['run', 'watch']);
    const pidFile = `${fake.log}.pid`;
    for (let i = 0; i < 200 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    const ghPid = Number(fs.readFileSync(pidFile, 'utf8'));
    await broker.close();
    const r = await pending;
    expect(r.status).toBe(1);
    expect(() => process.kill(ghPid, 0)).toThrow();
    expect(fs.existsSync(broker.dir)).toBe(false);
  });
});

describe('a client that is not the shim', () => {
  /** Connects; resolves with everything the broker sent before closing. */
  function talk(send: (socket: net.Socket, fd: number) => void): Promise<string> {
    return new Promise((resolve) => {
      const fd = unixConnect(broker.socketPath);
      const socket = new net.Socket({ fd, readable: true, writable: true });
      let got = Buffer.alloc(0);
      socket.on('data', (b) => (got = Buffer.concat([got, b])));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(got.subarray(4).toString()));
      send(socket, fd);
    });
  }

  it('sending garbage is answered with an error and closed; the broker goes on', async () => {
    expect(await talk((s) => s.write('GET / HTTP/1.0\r\n\r\n'))).toMatch(/bad request: expected 3 descriptors/);
    answers = ['once'];
    expect((await gh(['pr', 'list'])).status).toBe(0);
  });

  it('sending an oversized message is refused without reading it', async () => {
    const reply = await talk((s, fd) => {
      sendFds(fd, FDS_MARKER, [0, 1, 2]);
      const header = Buffer.alloc(4);
      header.writeUInt32BE(1 << 30, 0);
      s.write(header);
    });
    expect(reply).toMatch(/message too large/);
  });

  it('sending a request that is not one is refused', async () => {
    const reply = await talk((s, fd) => {
      sendFds(fd, FDS_MARKER, [0, 1, 2]);
      s.write(encodeFrame({ v: 1, tool: 'gh', argv: ['pr', 'list'], cwd: 'relative', env: {} }));
    });
    expect(reply).toMatch(/bad request: bad cwd/);
    expect(fake.calls()).toEqual([]);
  });

  it('sending nothing is given up on', async () => {
    const started = Date.now();
    const reply = await talk(() => undefined);
    expect(reply).toMatch(/no request in time/);
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 20_000);
});
