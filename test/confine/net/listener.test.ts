// The launcher's `proxy-listen` record (native/launcher/proxy_listener.cc, src/confine/launch.ts):
// inside the command's network namespace it makes the proxy's listener and hands it to confine on
// its report socket before the command runs. Run here directly, with plans written here; the
// proxy through it is tested end to end as the unprivileged user (allow-host.test.ts).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

import { encodeLaunchPlan, spawnLauncher } from '../../../src/confine/launch';
import * as native from '../../../src/native';
import { tempDir } from '../../helpers/run';

const ENV = { PATH: '/usr/bin:/bin' };
const PORT = 3128;

function ended(child: import('node:child_process').ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('close', (code) => resolve(code)));
}

describe('proxy-listen', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('arb-listener-');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const namespaces = (mounts: { kind: 'tmpfs'; path: string }[] = []) => ({ pid: true, net: true, uid: process.getuid!(), gid: process.getgid!(), readOnlyRoot: true, mounts });

  it('hands confine a listener on 127.0.0.1:PORT inside the network namespace, which the command reaches and does not hold', async () => {
    const out = path.join(dir, 'out.txt');
    const fd = fs.openSync(out, 'w');
    // The command: what is on 127.0.0.1:PORT in its namespace, then which sockets it holds.
    const script = [
      'import os, socket',
      `s = socket.create_connection(("127.0.0.1", ${PORT}), timeout=10)`,
      'print(s.recv(100).decode().strip())',
      's.close()',
      'links = [os.readlink("/proc/self/fd/" + f) for f in os.listdir("/proc/self/fd") if os.path.exists("/proc/self/fd/" + f)]',
      'print("sockets held:", sum(1 for l in links if l.startswith("socket:")))',
    ].join('\n');
    let server: net.Server | undefined;
    try {
      const { child, started, listener } = spawnLauncher(
        { cwd: '/', file: '/usr/bin/python3', argv: ['python3', '-c', script], env: ENV, namespaces: namespaces(), proxyListen: PORT },
        { stdio: ['ignore', fd, fd] },
      );
      const exit = ended(child);
      const got = await listener;
      expect(typeof got).toBe('number');
      server = net.createServer((s) => s.end('served from outside\n'));
      await new Promise<void>((resolve) => server!.listen({ fd: got as number }, resolve));
      await started;
      expect({ exit: await exit, out: fs.readFileSync(out, 'utf8') }).toEqual({ exit: 0, out: 'served from outside\nsockets held: 0\n' });
    } finally {
      fs.closeSync(fd);
      server?.close();
    }
    expect(fs.readFileSync(out, 'utf8')).toBe('served from outside\nsockets held: 0\n');
  });

  it('a step before it fails: no listener, and the failure is reported as without one', async () => {
    const { child, started, listener } = spawnLauncher(
      { cwd: '/', file: '/bin/true', argv: ['true'], env: ENV, namespaces: namespaces([{ kind: 'tmpfs', path: '/nonexistent-arb-listener/x' }]), proxyListen: PORT },
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    const exit = ended(child);
    expect(await listener).toBeUndefined();
    await expect(started).rejects.toMatchObject({ code: 'EROFS', syscall: 'mkdir', path: '/nonexistent-arb-listener' });
    expect(await exit).toBe(127);
  });

  it('needs the report socket: without it the launcher runs nothing and exits 2', () => {
    const input = encodeLaunchPlan({ cwd: '/', file: '/bin/true', argv: ['true'], env: ENV, proxyListen: PORT });
    const r = spawnSync(native.launcherPath(), ['--plan-fd', '0'], { input, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('proxy-listen needs --report-fd');
  });
});
