// The bwrap jail: its argument list, built purely from a plan, then the jail itself tried for
// real through `arb confine --jail bwrap`, as the unprivileged test user, in allowed/denied
// pairs that assert the errno (a masked home answers ENOENT, a read-only mount EROFS).
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

import { BwrapPlan, bwrapArgs, exitCodeFromStatus, findBwrap, isUnder, policyBinds, protectedPaths, visibleInJail } from '../../src/confine/bwrap';
import { parseMounts } from '../../src/confine/mounts';
import { ArbError } from '../../src/errors';
import { itIf, testEnv } from '../helpers/env';
import { arbAsUser } from '../helpers/run';
import { ProbeRun, answer, confineProbe, removeUserArea, userDir, userFile } from './confine-helpers';

const HOME = '/home/u';

function plan(over: Partial<BwrapPlan> = {}): BwrapPlan {
  return {
    dir: '/home/u/src/proj.1',
    homes: [HOME],
    readable: ['/home/u/.gitconfig', '/home/u/.config/git', '/home/u/.local/bin', '/home/u/.claude.json'],
    writable: ['/tmp', '/var/tmp', '/dev/shm', '/dev/null', '/home/u/.cache', '/home/u/.npm'],
    root: [
      { name: 'usr', kind: 'other' },
      { name: 'bin', kind: 'link', target: 'usr/bin' },
      { name: 'etc', kind: 'other' },
      { name: 'home', kind: 'other' },
      { name: 'dev', kind: 'other' },
      { name: 'proc', kind: 'other' },
      { name: 'tmp', kind: 'other' },
      { name: 'run', kind: 'other' },
      { name: 'sys', kind: 'other' },
    ],
    file: '/usr/bin/python3',
    args: ['-c', 'print(1)'],
    setenv: { CLAUDE_CODE_SANDBOXED: '1' },
    ...over,
  };
}

/** The options (with their values) in order, as pairs easy to look for. */
function steps(args: string[]): string[] {
  const out: string[] = [];
  const arity: Record<string, number> = {
    '--ro-bind': 2, '--ro-bind-try': 2, '--bind': 2, '--bind-try': 2, '--symlink': 2, '--setenv': 2,
    '--tmpfs': 1, '--dev': 1, '--proc': 1, '--remount-ro': 1, '--chdir': 1, '--perms': 1, '--json-status-fd': 1, '--dir': 1,
  };
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') {
      out.push(['--', ...args.slice(i + 1)].join(' '));
      break;
    }
    const n = arity[args[i]] ?? 0;
    out.push([args[i], ...args.slice(i + 1, i + 1 + n)].join(' '));
    i += n;
  }
  return out;
}

describe('bwrapArgs', () => {
  const s = steps(bwrapArgs(plan()));

  it('unshares every namespace but the network, in a new session, dying with arb', () => {
    expect(s.slice(0, 4)).toEqual(['--unshare-all', '--share-net', '--die-with-parent', '--new-session']);
  });

  it('with --no-network unshares the network too (bwrap brings up loopback only)', () => {
    expect(bwrapArgs({ ...plan(), noNetwork: true }).slice(0, 3)).toEqual(['--unshare-all', '--die-with-parent', '--new-session']);
  });

  it("remakes the host's / read-only, entry by entry, links as links", () => {
    expect(s).toContain('--ro-bind /usr /usr');
    expect(s).toContain('--ro-bind /etc /etc');
    expect(s).toContain('--ro-bind /sys /sys');
    expect(s).toContain('--symlink usr/bin /bin');
    // The jail's own, never the host's.
    for (const own of ['/dev', '/proc', '/tmp', '/run']) expect(s).not.toContain(`--ro-bind ${own} ${own}`);
    expect(s.indexOf('--dev /dev')).toBeGreaterThan(s.indexOf('--ro-bind /usr /usr'));
    expect(s).toContain('--proc /proc');
    expect(s).toContain('--tmpfs /tmp');
    expect(s).toContain('--tmpfs /run');
    // Read-only at the end, once every mount point is made.
    expect(s.slice(-4)).toEqual(['--remount-ro /', '--chdir /home/u/src/proj.1', '--setenv CLAUDE_CODE_SANDBOXED 1', '-- /usr/bin/python3 -c print(1)']);
  });

  it('masks the home with an empty private file system, then binds back the policy paths', () => {
    const mask = s.indexOf(`--perms 0700`, s.indexOf('--tmpfs /run'));
    expect(s[mask + 1]).toBe(`--tmpfs ${HOME}`);
    const after = s.slice(mask + 2);
    expect(after).toContain('--ro-bind-try /home/u/.gitconfig /home/u/.gitconfig');
    expect(after).toContain('--ro-bind-try /home/u/.config/git /home/u/.config/git');
    expect(after).toContain('--ro-bind-try /home/u/.local/bin /home/u/.local/bin');
    expect(after).toContain('--bind-try /home/u/.cache /home/u/.cache');
    expect(after).toContain('--bind-try /home/u/src/proj.1 /home/u/src/proj.1');
    // No secret is named, so none is bound: hidden without being listed.
    expect(s.join(' ')).not.toMatch(/\.ssh|\.aws|\.netrc|\.bashrc|config\/gh/);
    // And the home is read-only around them, as Landlock denies writing there.
    expect(s).toContain(`--remount-ro ${HOME}`);
    expect(s.indexOf(`--remount-ro ${HOME}`)).toBeGreaterThan(s.indexOf('--bind-try /home/u/src/proj.1 /home/u/src/proj.1'));
  });

  it('binds writable paths outside the home read-write, leaving /dev, /proc and /tmp private', () => {
    expect(s).toContain('--bind-try /var/tmp /var/tmp');
    expect(s.join(' ')).not.toMatch(/--bind(-try)? \/dev\//);
    expect(s).not.toContain('--bind-try /tmp /tmp');
  });

  it('binds back, after the private /tmp, a directory that lives under /tmp', () => {
    const t = steps(bwrapArgs(plan({ dir: '/tmp/xfs/mnt/proj.2', writable: ['/tmp', '/tmp/user-tmp'] })));
    expect(t.indexOf('--bind-try /tmp/xfs/mnt/proj.2 /tmp/xfs/mnt/proj.2')).toBeGreaterThan(t.indexOf('--tmpfs /tmp'));
    expect(t).toContain('--bind-try /tmp/user-tmp /tmp/user-tmp');
    expect(t).toContain('--chdir /tmp/xfs/mnt/proj.2');
  });

  it('runs the command in the directory with CLAUDE_CODE_SANDBOXED=1, after --', () => {
    expect(s).toContain('--chdir /home/u/src/proj.1');
    expect(s).toContain('--setenv CLAUDE_CODE_SANDBOXED 1');
    expect(s[s.length - 1]).toBe('-- /usr/bin/python3 -c print(1)');
    const raw = bwrapArgs(plan({ args: ['--help', '-d', '/'] }));
    expect(raw.slice(raw.indexOf('--'))).toEqual(['--', '/usr/bin/python3', '--help', '-d', '/']);
  });

  it('keeps paths with spaces, colons and newlines as single arguments', () => {
    const odd = '/home/u/my src/a:b\nc';
    const raw = bwrapArgs(plan({ dir: odd, readable: ['/home/u/tool dir'], file: '/opt/my tool/run', args: ['a b'] }));
    const i = raw.indexOf('--chdir');
    expect(raw[i + 1]).toBe(odd);
    expect(raw).toEqual(expect.arrayContaining(['--bind-try', odd, odd]));
    expect(raw.slice(raw.indexOf('--') + 1)).toEqual(['/opt/my tool/run', 'a b']);
    expect(steps(raw)).toContain('--ro-bind-try /home/u/tool dir /home/u/tool dir');
  });

  it('applies --mount entries after the defaults, in the order given, before the final read-only remounts', () => {
    const t = steps(bwrapArgs(plan({ mounts: parseMounts(['rw:/srv/data:/data', 'ro:/srv/ref', 'tmpfs:/tmp', 'dev:/dev', 'proc:/proc']) })));
    const at = (x: string) => t.indexOf(x);
    const order = ['--bind /srv/data /data', '--ro-bind /srv/ref /srv/ref', '--tmpfs /tmp', '--dev /dev', '--proc /proc'].map((x) => t.lastIndexOf(x));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBeGreaterThan(at('--bind-try /home/u/src/proj.1 /home/u/src/proj.1'));
    expect(order[4]).toBeLessThan(at('--remount-ro /'));
  });

  it('masks /run, keeping the resolver configuration and an empty private runtime directory', () => {
    const t = steps(bwrapArgs(plan({ keepUnderRun: ['/run/systemd/resolve/stub-resolv.conf', '/etc/not-under-run'], runtimeDir: '/run/user/1000' })));
    expect(t.indexOf('--ro-bind-try /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf')).toBeGreaterThan(t.indexOf('--tmpfs /run'));
    expect(t.join('\n')).not.toContain('/etc/not-under-run');
    expect(t[t.indexOf('--tmpfs /run/user/1000') - 1]).toBe('--perms 0700');
    expect(t).toContain('--remount-ro /run');
  });

  it('does not remount read-only a mask that something was mounted on or over', () => {
    // -d ~ : the home is the directory, writable.
    const t = steps(bwrapArgs(plan({ dir: HOME })));
    expect(t).toContain(`--bind-try ${HOME} ${HOME}`);
    expect(t).not.toContain(`--remount-ro ${HOME}`);
    const r = steps(bwrapArgs(plan({ mounts: parseMounts(['rw:/srv/run:/run']) })));
    expect(r).not.toContain('--remount-ro /run');
    expect(r).toContain('--remount-ro /');
  });

  it('masks every home directory (the user\'s and $HOME), once when one holds the other', () => {
    const t = steps(bwrapArgs(plan({ homes: ['/home/u', '/srv/h', '/home/u/sub'] })));
    expect(t.filter((x) => x.startsWith('--tmpfs /home') || x.startsWith('--tmpfs /srv'))).toEqual(['--tmpfs /home/u', '--tmpfs /srv/h']);
    expect(t).toContain('--remount-ro /srv/h');
  });

  it('remakes links inside a mask that lead to a bound path, after the binds', () => {
    const t = steps(
      bwrapArgs(
        plan({
          readable: ['/home/u/dotfiles/gitconfig'],
          links: [
            { location: '/home/u/.gitconfig', target: 'dotfiles/gitconfig' },
            { location: '/etc/alternatives/x', target: '/usr/bin/x' }, // not in a mask: nothing to do
          ],
        }),
      ),
    );
    expect(t.indexOf('--symlink dotfiles/gitconfig /home/u/.gitconfig')).toBeGreaterThan(t.indexOf('--ro-bind-try /home/u/dotfiles/gitconfig /home/u/dotfiles/gitconfig'));
    expect(t.join('\n')).not.toContain('/etc/alternatives');
  });

  it('adds the status descriptor when asked', () => {
    expect(steps(bwrapArgs(plan({ statusFd: 3 })))).toContain('--json-status-fd 3');
    expect(bwrapArgs(plan())).not.toContain('--json-status-fd');
  });

  it('refuses a home that is / or relative, rather than masking everything or nothing', () => {
    expect(() => bwrapArgs(plan({ homes: ['/'] }))).toThrow(ArbError);
    expect(() => bwrapArgs(plan({ homes: ['u'] }))).toThrow(/cannot mask the home directory 'u'/);
  });
});

describe('policyBinds', () => {
  it('binds readable paths only inside the home directory or the private /tmp, writable ones always', () => {
    const b = policyBinds({ dir: '/w/p', homes: [HOME], readable: ['/opt/x', '/home/u/.gitconfig', '/tmp/r', '/run/user'], writable: ['/srv/out'] });
    expect(b).toEqual([
      { path: '/srv/out', write: true },
      { path: '/tmp/r', write: false },
      { path: '/w/p', write: true },
      { path: '/home/u/.gitconfig', write: false },
    ]);
  });

  it("never brings back /run, /tmp or a home from the policy's grants of reading around the home", () => {
    // The policy grants reading to every entry of / but /home: /run and /tmp among them.
    const t = steps(bwrapArgs(plan({ readable: ['/run', '/tmp', '/etc', '/home/other', '/home/u/.gitconfig'] })));
    expect(t.join('\n')).not.toMatch(/--ro-bind(-try)? \/run /);
    expect(t.join('\n')).not.toMatch(/--ro-bind(-try)? \/tmp /);
    expect(t).toContain('--remount-ro /run');
  });

  it('leaves paths inside a writable one to it (no second bind to follow a planted link)', () => {
    const b = policyBinds({ dir: '/w/p', homes: [HOME], readable: ['/home/u/.cache/tool'], writable: ['/home/u/.cache', '/home/u/.cache/opencode', '/w/p/sub'] });
    expect(b.map((x) => x.path)).toEqual(['/w/p', '/home/u/.cache']);
  });

  it('binds a writable path inside a readable one after it, and a path in both lists once, writable', () => {
    const b = policyBinds({ dir: '/w/p', homes: [HOME], readable: ['/home/u/.config/opencode', '/home/u/.x'], writable: ['/home/u/.config/opencode/state', '/home/u/.x'] });
    expect(b).toEqual([
      { path: '/w/p', write: true },
      { path: '/home/u/.x', write: true },
      { path: '/home/u/.config/opencode', write: false },
      { path: '/home/u/.config/opencode/state', write: true },
    ]);
  });

  it('ignores relative paths and normalizes the rest', () => {
    const b = policyBinds({ dir: '/w/p/', homes: [HOME], readable: ['rel', '/home/u/./a/'], writable: [] });
    expect(b.map((x) => x.path)).toEqual(['/w/p', '/home/u/a']);
  });
});

describe('protectedPaths', () => {
  // A fake file system: what exists, and links.
  const files: Record<string, 'directory' | 'file' | 'symlink'> = {
    '/home/u/.cargo': 'directory',
    '/home/u/.cargo/bin': 'directory',
    '/home/u/.cargo/env': 'file',
    '/home/u/.cargo/planted': 'symlink',
    '/home/u/.ssh': 'directory',
    '/home/u/.local/bin': 'directory',
    '/w/p/node_modules/.bin': 'directory',
  };
  const view = {
    lstat: (p: string) => files[p],
    readlink: (p: string) => (p === '/home/u/.cargo/planted' ? '/home/u/.ssh' : undefined),
  };
  const input = { writable: ['/home/u/.cargo', '/w/p'], homes: [HOME], dir: '/w/p' };

  it('takes $PATH entries and run-later files inside a writable path, where they really are', () => {
    expect(protectedPaths({ ...input, pathVar: '/home/u/.cargo/bin:/usr/bin:/home/u/.local/bin' }, view)).toEqual(['/home/u/.cargo/bin', '/home/u/.cargo/env']);
  });

  it('leaves out the directory the command works in, and links that lead out of the writable path', () => {
    expect(protectedPaths({ ...input, pathVar: '/w/p/node_modules/.bin:/home/u/.cargo/planted' }, view)).toEqual(['/home/u/.cargo/env']);
  });

  it('makes them read-only binds after the writable one they are in', () => {
    const b = policyBinds({ dir: '/w/p', homes: [HOME], readable: [], writable: ['/home/u/.cargo'], protect: ['/home/u/.cargo/bin', '/home/u/.cargo/env', '/elsewhere'] });
    expect(b).toEqual([
      { path: '/w/p', write: true },
      { path: '/home/u/.cargo', write: true },
      { path: '/home/u/.cargo/bin', write: false },
      { path: '/home/u/.cargo/env', write: false },
    ]);
    // Given writable itself (-w), it stays writable.
    const w = policyBinds({ dir: '/w/p', homes: [HOME], readable: [], writable: ['/home/u/.cargo', '/home/u/.cargo/bin'], protect: ['/home/u/.cargo/bin'] });
    expect(w).toEqual([
      { path: '/w/p', write: true },
      { path: '/home/u/.cargo', write: true },
    ]);
  });
});

describe('visibleInJail', () => {
  const p = plan();
  it('shows what is outside the masks and what is bound back', () => {
    expect(visibleInJail('/usr/bin/git', p)).toBe(true);
    expect(visibleInJail('/home/u/.local/bin/claude', p)).toBe(true);
    expect(visibleInJail('/home/u/src/proj.1/run.sh', p)).toBe(true);
  });
  it('hides the rest of the home, /tmp and /run', () => {
    expect(visibleInJail('/home/u/scripts/tool', p)).toBe(false);
    expect(visibleInJail('/tmp/x/tool', p)).toBe(false);
    expect(visibleInJail('/run/user/1000/tool', p)).toBe(false);
    expect(visibleInJail('/home/u/scripts/tool', { ...p, mounts: parseMounts(['ro:/home/u/scripts']) })).toBe(true);
  });
});

describe('isUnder', () => {
  it('compares whole path components', () => {
    expect(isUnder('/home/u', '/home/u')).toBe(true);
    expect(isUnder('/home/u/x', '/home/u')).toBe(true);
    expect(isUnder('/home/user2', '/home/u')).toBe(false);
    expect(isUnder('/anything', '/')).toBe(true);
  });
});

describe('exitCodeFromStatus', () => {
  it("reads bwrap's exit-code report, and nothing when it never came", () => {
    expect(exitCodeFromStatus('{ "child-pid": 12, "mnt-namespace": 4 }\n{ "exit-code": 3 }\n')).toBe(3);
    expect(exitCodeFromStatus('{ "child-pid": 12 }\n')).toBeUndefined();
    expect(exitCodeFromStatus('{ "child-pid": 12 }\n{ "exit-co')).toBeUndefined();
    expect(exitCodeFromStatus('')).toBeUndefined();
  });
});

describe('findBwrap', () => {
  it('names the package to install when bwrap is missing', () => {
    expect(() => findBwrap('/nonexistent:relative', [])).toThrow(
      "cannot use the bwrap jail: bubblewrap's program 'bwrap' is not installed (not found on PATH)",
    );
    try {
      findBwrap('/nonexistent', []);
    } catch (err) {
      expect(err).toMatchObject({ code: 'ARB_UNSUPPORTED', hint: expect.stringContaining('install the package bubblewrap') });
    }
  });

  it('finds it on PATH', () => {
    const dir = fs.mkdtempSync('/tmp/arb-bwrap-');
    try {
      fs.writeFileSync(path.join(dir, 'bwrap'), '#!/bin/sh\n', { mode: 0o755 });
      expect(findBwrap(`/nonexistent:${dir}`, [])).toBe(path.join(dir, 'bwrap'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

// --- the jail, for real, as the unprivileged test user ---------------------------------------


const env = testEnv();
const user = env.user;
const home = user?.home ?? `/home/${process.env.ARB_TEST_USER || 'arbtest'}`;
const haveUser = Boolean(user && env.userWork);
const jailTest = itIf(haveUser && fs.existsSync('/usr/bin/bwrap'), env.userMissing ?? 'no bwrap (apt-get install bubblewrap)');

function answers(run: ProbeRun, ops: string[]): Record<string, string | undefined> {
  if (run.r.status !== 0) throw new Error(`confine failed (${run.r.status}): ${run.r.stderr}`);
  return Object.fromEntries(ops.map((op) => [op, answer(run, op)]));
}

function bwrapProbe(dir: string, expected: Record<string, string>, extra: string[] = [], options: { env?: NodeJS.ProcessEnv } = {}): ProbeRun {
  const run = confineProbe(['--jail', 'bwrap', ...extra, '-d', dir], Object.keys(expected), options);
  expect(answers(run, Object.keys(expected))).toEqual(expected);
  return run;
}

afterAll(removeUserArea);

describe('arb confine --jail bwrap, as the unprivileged user', () => {
  jailTest('hides the secrets in the home directory (ENOENT) and shows what commands need', () => {
    const dir = userDir('bw-read');
    bwrapProbe(dir, {
      [`read:${home}/.ssh/id_ed25519`]: 'ENOENT',
      [`read:${home}/.aws/credentials`]: 'ENOENT',
      [`read:${home}/.netrc`]: 'ENOENT',
      [`read:${home}/.config/gh/hosts.yml`]: 'ENOENT',
      [`read:${home}/.bashrc`]: 'ENOENT',
      [`read:${home}/notes.txt`]: 'ENOENT',
      [`read:${home}/.cargo/credentials.toml`]: 'OK', // ~/.cargo is writable by the SPEC: the same as Landlock
      [`read:${home}/.gitconfig`]: 'OK',
      [`read:${home}/.config/git/ignore`]: 'OK',
      [`read:${home}/.claude.json`]: 'ENOENT', // the claude preset's only
      [`exec:${home}/.local/bin/mytool`]: 'OK',
      'read:/etc/passwd': 'OK',
    });
  });

  jailTest('the directory is writable; /, the home and the rest of the host are read-only (EROFS)', () => {
    const dir = userDir('bw-write');
    userFile(path.join(dir, 'kept.txt'), 'old\n');
    // A directory the user may write on the host, but which is not the command's.
    const other = userDir('bw-other');
    bwrapProbe(dir, {
      [`create:${dir}/new.txt`]: 'OK',
      [`write:${dir}/kept.txt`]: 'OK',
      [`mkdir:${dir}/sub`]: 'OK',
      [`create:${other}/x`]: 'EROFS',
      'create:/x': 'EROFS',
      [`create:${home}/x`]: 'EROFS',
      [`create:${home}/.cache/x`]: 'OK',
      [`create:${home}/.npm/x`]: 'OK',
    });
    expect(fs.existsSync(path.join(dir, 'new.txt'))).toBe(true);
    expect(fs.existsSync(path.join(other, 'x'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'x'))).toBe(false);
    fs.rmSync(path.join(home, '.cache', 'x'), { force: true });
    fs.rmSync(path.join(home, '.npm', 'x'), { force: true });
  });

  jailTest('keeps what runs outside later read-only inside the writable caches (~/.cargo/bin on PATH, ~/.cargo/env)', () => {
    const dir = userDir('bw-cargo');
    const bin = path.join(home, '.cargo', 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.chownSync(bin, user!.uid, user!.gid);
    userFile(path.join(bin, 'cargo'), '#!/bin/sh\n', 0o755);
    userFile(path.join(home, '.cargo', 'env'), 'export PATH=$HOME/.cargo/bin:$PATH\n');
    try {
      bwrapProbe(
        dir,
        {
          [`create:${bin}/planted`]: 'EROFS',
          [`write:${bin}/cargo`]: 'EROFS',
          [`write:${home}/.cargo/env`]: 'EROFS',
          [`create:${home}/.cargo/registry-file`]: 'OK',
          [`exec:${bin}/cargo`]: 'OK',
        },
        [],
        { env: { PATH: `${bin}:/usr/bin:/bin` } },
      );
      expect(fs.existsSync(path.join(bin, 'planted'))).toBe(false);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
      fs.rmSync(path.join(home, '.cargo', 'env'), { force: true });
      fs.rmSync(path.join(home, '.cargo', 'registry-file'), { force: true });
    }
  });

  jailTest('/tmp is private and writable; /run is masked, so host sockets there are gone', () => {
    const dir = userDir('bw-tmp');
    const hostTmp = path.join('/tmp', `arb-bw-host-${process.pid}`);
    fs.writeFileSync(hostTmp, 'host\n', { mode: 0o644 });
    const sock = `/run/arb-bw-test-${process.pid}.sock`;
    const server = net.createServer().listen(sock);
    try {
      fs.chmodSync(sock, 0o777);
      const run = bwrapProbe(dir, {
        [`read:${hostTmp}`]: 'ENOENT',
        [`create:/tmp/inside-${process.pid}`]: 'OK',
        [`unix:${sock}`]: 'ENOENT',
        'create:/run/x': 'EROFS',
        'stat:/proc/self/status': 'OK',
        'stat:/dev/null': 'OK',
      });
      expect(run.r.status).toBe(0);
      // Without the jail the socket is there to connect to (the pair to the denial above).
      expect(fs.statSync(sock).isSocket()).toBe(true);
      expect(fs.existsSync(`/tmp/inside-${process.pid}`)).toBe(false);
    } finally {
      server.close();
      fs.rmSync(hostTmp, { force: true });
      fs.rmSync(sock, { force: true });
    }
  });

  jailTest('forks, and a fork under /tmp is bound back writable after the private /tmp', () => {
    const parent = fs.mkdtempSync('/tmp/arb-bw-');
    fs.chownSync(parent, user!.uid, user!.gid);
    const project = userDir('proj', parent);
    userFile(path.join(project, 'a.txt'), 'a\n');
    const r = arbAsUser(['confine', '--jail', 'bwrap', '--', 'sh', '-c', 'echo changed > a.txt && pwd && echo $CLAUDE_CODE_SANDBOXED'], { cwd: project });
    try {
      expect(r.stderr).toContain(`forked ${project} to ${project}.1`);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`${project}.1\n1\n`);
      expect(fs.readFileSync(path.join(`${project}.1`, 'a.txt'), 'utf8')).toBe('changed\n');
      expect(fs.readFileSync(path.join(project, 'a.txt'), 'utf8')).toBe('a\n');
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });

  jailTest('--mount rw:SRC:/data appears writable, ro read-only, tmpfs empty and writable, in order', () => {
    const dir = userDir('bw-mount');
    const data = userDir('bw-data');
    const ref = userDir('bw-ref');
    userFile(path.join(ref, 'r.txt'), 'ref\n');
    bwrapProbe(
      dir,
      {
        'create:/data/made-inside': 'OK',
        'read:/ref/r.txt': 'OK',
        'create:/ref/x': 'EROFS',
        'create:/scratch/x': 'OK',
        [`create:${home}/.cache/over`]: 'OK',
        [`read:${home}/.cache/.keep`]: 'ENOENT', // the tmpfs mount came after the default bind
      },
      ['--mount', `rw:${data}:/data`, '--mount', `ro:${ref}:/ref`, '--mount', 'tmpfs:/scratch', '--mount', `tmpfs:${home}/.cache`],
    );
    expect(fs.existsSync(path.join(data, 'made-inside'))).toBe(true);
    expect(fs.existsSync(path.join(ref, 'x'))).toBe(false);
    expect(fs.existsSync(path.join(home, '.cache', 'over'))).toBe(false);
  });

  jailTest('a bad --mount spec is refused with its reason (exit 2), and nothing is forked', () => {
    const parent = userDir('bw-bad');
    const project = userDir('proj', parent);
    const cases: [string[], RegExp][] = [
      [['--jail', 'bwrap', '--mount', 'bind:/a:/b'], /--mount 'bind:\/a:\/b': unknown mount type 'bind': use one of ro, rw, tmpfs, dev, proc/],
      [['--jail', 'bwrap', '--mount', 'ro'], /too few parts/],
      [['--jail', 'bwrap', '--mount', 'rw:/a:/b:/c'], /too many parts/],
      [['--jail', 'bwrap', '--mount', 'tmpfs:/etc:/x'], /tmpfs takes no source/],
      [['--jail', 'bwrap', '--mount', 'rw:data:/data'], /the source path 'data' is relative/],
      [['--jail', 'bwrap', '--mount', `rw:${parent}/nonexistent:/data`], /the source '.*\/nonexistent' does not exist/],
      [['--mount', 'tmpfs:/x'], /--mount needs --jail bwrap: the landlock jail cannot mount anything/],
      [['--jail', 'none', '--mount', 'tmpfs:/x'], /--mount needs --jail bwrap: the none jail/],
    ];
    for (const [args, message] of cases) {
      const r = arbAsUser(['confine', ...args, '--', 'true'], { cwd: project });
      expect({ args, status: r.status, stderr: r.stderr }).toEqual({ args, status: 2, stderr: expect.stringMatching(message) });
    }
    expect(fs.readdirSync(parent)).toEqual([path.basename(project)]);
  });

  jailTest('a --mount bwrap cannot make is refused with bwrap\'s reason, and nothing runs', () => {
    const dir = userDir('bw-nomount');
    const r = arbAsUser(['confine', '--jail', 'bwrap', '--mount', 'tmpfs:/usr/no-such-dir-arb', '-d', dir, '--', 'sh', '-c', 'echo ran']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain("bwrap: Can't mkdir /usr/no-such-dir-arb: Read-only file system");
    expect(r.stderr).toContain('bubblewrap could not set up the jail or start the command');
    expect(r.stderr).toContain('give one that exists');
  });

  jailTest("passes the command's exit status and signals through", () => {
    const dir = userDir('bw-status');
    expect(arbAsUser(['confine', '--jail', 'bwrap', '-d', dir, '--', 'sh', '-c', 'exit 7']).status).toBe(7);
    expect(arbAsUser(['confine', '--jail', 'bwrap', '-d', dir, '--', 'sh', '-c', 'kill -TERM $$']).status).toBe(143);
    const missing = arbAsUser(['confine', '--jail', 'bwrap', '-d', dir, '--', 'no-such-command-arb']);
    expect(missing.status).toBe(127);
    expect(missing.stderr).toContain('no-such-command-arb: command not found');
  });

  jailTest('refuses (126) a command the jail would hide, saying how to show it', () => {
    const dir = userDir('bw-hidden');
    const tools = fs.mkdtempSync('/tmp/arb-bw-tools-');
    fs.chmodSync(tools, 0o755);
    const tool = path.join(tools, 'tool');
    fs.writeFileSync(tool, '#!/bin/sh\necho tool ran\n', { mode: 0o755 });
    try {
      const r = arbAsUser(['confine', '--jail', 'bwrap', '-d', dir, '--', tool]);
      expect(r.status).toBe(126);
      expect(r.stderr).toContain(`cannot run '${tool}' in the bwrap jail: it is in a directory the jail hides`);
      expect(r.stderr).toContain(`--mount ro:${tools}`);
      // The pair: shown with --mount, it runs.
      const shown = arbAsUser(['confine', '--jail', 'bwrap', '--mount', `ro:${tools}`, '-d', dir, '--', tool]);
      expect(shown.stdout).toBe('tool ran\n');
      expect(shown.status).toBe(0);
    } finally {
      fs.rmSync(tools, { recursive: true, force: true });
    }
  });

  jailTest('--jail none runs the command unconfined, warning every time, without CLAUDE_CODE_SANDBOXED', () => {
    const dir = userDir('bw-none');
    for (let i = 0; i < 2; i++) {
      const r = arbAsUser(['confine', '--jail', 'none', '-d', dir, '--', 'sh', '-c', `cat ${home}/.ssh/id_ed25519; echo "[\${CLAUDE_CODE_SANDBOXED-unset}]"; exit 3`]);
      expect(r.stderr).toMatch(/WARNING: --jail none: the command runs WITHOUT ANY ISOLATION/);
      expect(r.stdout).toBe('FAKE-SSH-PRIVATE-KEY\n[unset]\n');
      expect(r.status).toBe(3);
    }
  });
});

describe('arb confine presets, as the unprivileged user', () => {
  const claudeDir = path.join(home, '.claude');
  afterAll(() => fs.rmSync(claudeDir, { recursive: true, force: true }));

  /** A stand-in `claude`: says which keys it sees and writes its state where Claude Code does. */
  function fakeClaude(dir: string): string {
    return userFile(
      path.join(dir, 'claude'),
      `#!/bin/sh\necho "anthropic=\${ANTHROPIC_API_KEY-unset} openai=\${OPENAI_API_KEY-unset}"\necho state > "$HOME/.claude/session" && echo state-ok\n`,
      0o755,
    );
  }

  for (const jail of ['bwrap', 'landlock']) {
    jailTest(`applies the claude preset by the command's name (--jail ${jail}): ~/.claude writable, ANTHROPIC_API_KEY kept`, () => {
      fs.rmSync(claudeDir, { recursive: true, force: true });
      const dir = userDir(`preset-${jail}`);
      fakeClaude(dir);
      const r = arbAsUser(['confine', '--jail', jail, '-d', dir, '--', './claude'], {
        env: { ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests-0000000000', OPENAI_API_KEY: 'sk-fake-openai-key-for-tests-000000' },
      });
      expect(r.stderr).toContain('using the claude preset (~/.claude writable, kept after it exits; ~/.claude.json through a copy in ~/.claude (CLAUDE_CONFIG_DIR), copied back when it exits; keeps ANTHROPIC_API_KEY; --preset none to not)');
      expect(r.stdout).toBe('anthropic=sk-ant-fake-key-for-tests-0000000000 openai=unset\nstate-ok\n');
      expect(r.status).toBe(0);
      expect(fs.readFileSync(path.join(claudeDir, 'session'), 'utf8')).toBe('state\n');
    });
  }

  jailTest('--preset none turns the choice by name off: the key goes, ~/.claude is not writable', () => {
    const dir = userDir('preset-none');
    fakeClaude(dir);
    const r = arbAsUser(['confine', '--jail', 'bwrap', '--preset', 'none', '-d', dir, '--', './claude'], { env: { ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests-0000000000' } });
    expect(r.stderr).not.toContain('preset (');
    expect(r.stdout).toBe('anthropic=unset openai=unset\n');
  });

  jailTest('an unknown preset is refused (exit 2) listing the known ones; --preset alone runs its command', () => {
    const dir = userDir('preset-bad');
    const bad = arbAsUser(['confine', '--preset', 'gemini', '-d', dir, '--', 'true']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--preset: unknown preset 'gemini': the known presets are claude, codex, opencode");
    // No `codex` is installed here: the preset's command is what confine looks for.
    const alone = arbAsUser(['confine', '--preset', 'codex', '-d', dir]);
    expect(alone.status).toBe(127);
    expect(alone.stderr).toContain('codex: command not found');
  });
});
