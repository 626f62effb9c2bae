// The launcher (native/launcher/, src/confine/launch.ts): what confine spawns or becomes to
// apply a sandbox. These run it directly, with plans written here; the sandbox itself is tested
// end to end as the unprivileged user (sandbox.test.ts, hardening-attacks.test.ts).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { findBwrap } from '../../src/confine/bwrap';
import { encodeLaunchPlan, probeNamespaces, spawnLauncher } from '../../src/confine/launch';
import { buildRuleset } from '../../src/confine/landlock';
import * as native from '../../src/native';
import { tempDir } from '../helpers/run';

const ENV = { PATH: '/usr/bin:/bin' };
// The test setup installs bubblewrap (.ci/run): its absence fails the test that needs it.
const bwrap = findBwrap();

function ended(child: import('node:child_process').ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('close', (code) => resolve(code)));
}

describe('the launch plan', () => {
  it('is NUL-separated records, from the format name to end', () => {
    const bytes = encodeLaunchPlan({ cwd: '/', file: '/bin/echo', argv: ['echo', 'a b'], env: { A: '1' }, keepFds: [5] });
    expect(bytes.toString('utf8').split('\0')).toEqual(['arb-launch-plan/1', 'cwd', '/', 'file', '/bin/echo', 'argv', '2', 'echo', 'a b', 'env', '1', 'A=1', 'keep-fd', '5', 'end', '']);
  });

  it('names the working directory by an inherited descriptor with a cwd-fd record', () => {
    const bytes = encodeLaunchPlan({ cwd: '/w', file: '/bin/true', argv: ['true'], env: {} }, { cwdFd: 5 });
    expect(bytes.toString('utf8').split('\0')).toEqual(['arb-launch-plan/1', 'cwd', '/w', 'file', '/bin/true', 'argv', '1', 'true', 'env', '0', 'cwd-fd', '5', 'end', '']);
  });

  it('refuses a NUL inside a value rather than cutting it', () => {
    expect(() => encodeLaunchPlan({ cwd: '/', file: '/bin/echo', argv: ['echo', 'a\0b'], env: {} })).toThrow(/NUL/);
  });

  it('a malformed plan: the launcher runs nothing and exits 2 with why', () => {
    const launcher = native.launcherPath();
    const words = (...w: string[]) => w.map((x) => `${x}\0`).join('');
    const runTrue = ['arb-launch-plan/1', 'cwd', '/', 'file', '/bin/true', 'argv', '1', 'true', 'env', '0'];
    for (const input of [
      'nonsense\0',
      'arb-launch-plan/1\0cwd\0/\0',
      'arb-launch-plan/1\0argv\0x\0end\0',
      'arb-launch-plan/1\0rm\0-rf\0end\0',
      // A working directory's descriptor must be one of its own (above 2), given once, and never
      // with namespaces (a directory opened outside would lead out of their view).
      words(...runTrue, 'cwd-fd', '2', 'end'),
      words(...runTrue, 'cwd-fd', '5', 'cwd-fd', '6', 'end'),
      words(...runTrue, 'cwd-fd', '5', 'namespaces', '0', '0', '0', '0', '1', 'end'),
    ]) {
      const r = spawnSync(launcher, ['--plan-fd', '0'], { input, encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^arb-launcher: /);
    }
    const none = spawnSync(launcher, [], { encoding: 'utf8' });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('run by arb confine');
  });
});

describe('spawnLauncher', () => {
  let dir: string;
  beforeAll(() => {
    dir = tempDir('arb-launch-');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("runs the command with the standard streams it is given (as the broker runs a tool with a client's)", async () => {
    const out = path.join(dir, 'out.txt');
    const fd = fs.openSync(out, 'w');
    try {
      const { child, started } = spawnLauncher(
        { cwd: dir, file: '/bin/sh', argv: ['sh', '-c', 'pwd; echo "$A"; ls /proc/self/fd'], env: { ...ENV, A: 'from the plan' } },
        { stdio: ['ignore', fd, 'inherit'] },
      );
      const exit = ended(child); // listening before anything is awaited: 'close' may come first
      await started;
      expect(await exit).toBe(0);
    } finally {
      fs.closeSync(fd);
    }
    const [pwd, a, ...fds] = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(pwd).toBe(dir);
    expect(a).toBe('from the plan');
    // 0, 1, 2 and the descriptor ls opened to list them: the plan's and the report's are gone.
    expect(fds.map(Number).filter((n) => n > 2).length).toBeLessThanOrEqual(1);
  });

  it('runs in the directory given as a descriptor (cwd-fd), whatever its name leads to by then', async () => {
    const work = path.join(dir, 'cwd-work');
    const elsewhere = path.join(dir, 'cwd-elsewhere');
    fs.mkdirSync(work);
    fs.mkdirSync(elsewhere);
    fs.writeFileSync(path.join(work, 'mine'), '');
    fs.writeFileSync(path.join(elsewhere, 'theirs'), '');
    const dirFd = fs.openSync(work, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    // The name now leads elsewhere: the descriptor still holds what was opened.
    fs.renameSync(work, `${work}.moved`);
    fs.symlinkSync(elsewhere, work);
    const out = path.join(dir, 'cwd.txt');
    const fd = fs.openSync(out, 'w');
    try {
      const { child, started } = spawnLauncher(
        { cwd: work, file: '/bin/sh', argv: ['sh', '-c', 'pwd -P; ls; ls /proc/self/fd'], env: ENV },
        { stdio: ['ignore', fd, 'inherit'], cwdFd: dirFd },
      );
      const exit = ended(child);
      await started;
      expect(await exit).toBe(0);
    } finally {
      fs.closeSync(fd);
      fs.closeSync(dirFd);
    }
    const [pwd, listed, ...fds] = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(pwd).toBe(`${work}.moved`);
    expect(listed).toBe('mine');
    // The directory's descriptor was closed once used: 0, 1, 2 and the one ls opened.
    expect(fds.map(Number).filter((n) => n > 2).length).toBeLessThanOrEqual(1);
  });

  it('a directory descriptor that is not one fails before anything runs (fchdir, ENOTDIR)', async () => {
    const file = path.join(dir, 'not-a-dir');
    fs.writeFileSync(file, '');
    const fileFd = fs.openSync(file, 'r');
    try {
      const { child, started } = spawnLauncher({ cwd: file, file: '/bin/true', argv: ['true'], env: ENV }, { stdio: ['ignore', 'ignore', 'ignore'], cwdFd: fileFd });
      const exit = ended(child);
      await expect(started).rejects.toMatchObject({ code: 'ENOTDIR', syscall: 'fchdir', path: file, confined: false });
      expect(await exit).toBe(127);
    } finally {
      fs.closeSync(fileFd);
    }
  });

  it('a step that fails is reported (errno, syscall, path), and the command never runs', async () => {
    const { child, started } = spawnLauncher({ cwd: path.join(dir, 'missing'), file: '/bin/true', argv: ['true'], env: ENV }, { stdio: ['ignore', 'ignore', 'ignore'] });
    const exit = ended(child);
    await expect(started).rejects.toMatchObject({ code: 'ENOENT', syscall: 'chdir', path: path.join(dir, 'missing'), confined: false });
    expect(await exit).toBe(127);
  });

  it('applies Landlock before execve: a file outside the grants cannot be read (EACCES)', async () => {
    const abi = native.landlockAbi();
    expect(abi).toBeGreaterThanOrEqual(2);
    const secret = path.join(dir, 'secret');
    fs.writeFileSync(secret, 'x');
    const out = path.join(dir, 'll.txt');
    const fd = fs.openSync(out, 'w');
    const ruleset = buildRuleset(
      [
        { path: '/usr', access: 'read', isDirectory: true, why: '' },
        { path: '/bin', access: 'read', isDirectory: true, why: '' },
        { path: '/lib', access: 'read', isDirectory: true, why: '' },
        { path: '/lib64', access: 'read', isDirectory: true, why: '' },
        { path: '/etc', access: 'read', isDirectory: true, why: '' },
      ] as never,
      abi,
    );
    try {
      const { child, started } = spawnLauncher(
        { cwd: '/', file: '/bin/sh', argv: ['sh', '-c', `head -c0 /etc/hostname && echo etc ok; cat ${secret} 2>&1 || echo denied`], env: ENV, landlock: ruleset },
        { stdio: ['ignore', fd, fd] },
      );
      const exit = ended(child);
      await started;
      await exit;
    } finally {
      fs.closeSync(fd);
    }
    const text = fs.readFileSync(out, 'utf8');
    expect(text).toContain('etc ok');
    expect(text).toMatch(/Permission denied\ndenied/);
  });

  it('where the namespaces do not work at all (a sandbox that forbids making more): Landlock alone, as the plan says, said on stderr; or refuses', async () => {
    const ns = { pid: true, net: false, uid: process.getuid!(), gid: process.getgid!(), readOnlyRoot: true, mounts: [{ kind: 'tmpfs' as const, path: '/tmp', size: 1 << 20 }] };
    const out = path.join(dir, 'fallback.txt');
    // bubblewrap's --disable-userns: inside, unshare(CLONE_NEWUSER) fails (ENOSPC), as in a
    // container that forbids nesting user namespaces.
    const noUserns = { file: bwrap, fds: 0, args: (argv: string[]) => ['--unshare-user', '--disable-userns', '--dev-bind', '/', '/', '--', ...argv] };
    const run = async (refuse: boolean, wrap?: typeof noUserns) => {
      const fd = fs.openSync(out, 'w');
      try {
        const { child, started } = spawnLauncher(
          {
            cwd: '/',
            file: '/bin/sh',
            argv: ['sh', '-c', 'echo pid=$$'],
            env: ENV,
            namespaces: ns,
            fallback: { handledAccessNet: 0n, denyNetwork: false, refuse, text: 'confine: namespaces do not work here ({syscall} {path}: {errno})' },
          },
          { stdio: ['ignore', fd, fd], wrap },
        );
        const exit = ended(child);
        await started.catch(() => {});
        return await exit;
      } finally {
        fs.closeSync(fd);
      }
    };
    expect(await run(false, noUserns)).toBe(0);
    const text = fs.readFileSync(out, 'utf8');
    expect(text).toContain('confine: namespaces do not work here (unshare: ENOSPC)\n');
    expect(text).toMatch(/^pid=\d+$/m);
    expect(text).not.toMatch(/^pid=2$/m); // no PID namespace of its own
    expect(await run(true, noUserns)).toBe(1);
    expect(fs.readFileSync(out, 'utf8')).toBe('confine: namespaces do not work here (unshare: ENOSPC)\n');
    // Where they work, the real ones are made, and nothing is said.
    expect(await run(true)).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe('pid=2\n');
  });

  it('a failure on a path the plan names is never a reason to run with less: said, nothing run, no fallback', async () => {
    const out = path.join(dir, 'no-fallback.txt');
    const fd = fs.openSync(out, 'w');
    let status: number | null;
    let failure: unknown;
    try {
      const { child, started } = spawnLauncher(
        {
          cwd: '/',
          file: '/bin/sh',
          argv: ['sh', '-c', 'echo ran'],
          env: ENV,
          // Its mount point cannot be made under the read-only root.
          namespaces: { pid: true, net: false, uid: process.getuid!(), gid: process.getgid!(), readOnlyRoot: true, mounts: [{ kind: 'tmpfs', path: '/nonexistent-arb-launch/x' }] },
          fallback: { handledAccessNet: 0n, denyNetwork: false, text: 'confine: namespaces do not work here ({syscall} {path}: {errno})' },
        },
        { stdio: ['ignore', fd, fd] },
      );
      const exit = ended(child);
      failure = await started.then(() => undefined, (e: unknown) => e);
      status = await exit;
    } finally {
      fs.closeSync(fd);
    }
    expect(failure).toMatchObject({ syscall: 'mkdir', code: 'EROFS', path: '/nonexistent-arb-launch' });
    expect(status).not.toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe('');
  });

  it('probes the namespaces with the steps confine takes', async () => {
    const r = await probeNamespaces({ pid: true, net: false, uid: process.getuid!(), gid: process.getgid!(), readOnlyRoot: true, mounts: [{ kind: 'tmpfs', path: '/tmp', size: 1 << 20 }] });
    expect(r).toEqual({ ok: true });
    const bad = await probeNamespaces({ pid: false, net: false, uid: process.getuid!(), gid: process.getgid!(), readOnlyRoot: true, mounts: [{ kind: 'bind-ro', path: '/nonexistent-dir/x', source: '/proc/self/nonexistent' }] });
    expect(bad).toEqual({ ok: true }); // a bind source that vanished only takes access away: no failure
    const refused = await probeNamespaces({ pid: false, net: false, uid: process.getuid!(), gid: process.getgid!(), readOnlyRoot: true, mounts: [{ kind: 'tmpfs', path: '/nonexistent-arb-probe/x' }] });
    // Its mount point cannot be made under the read-only root.
    expect(refused).toMatchObject({ ok: false, syscall: 'mkdir', code: 'EROFS', path: '/nonexistent-arb-probe' });
  });
});
