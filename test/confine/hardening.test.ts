// The hardening decisions, as pure functions: the mount plan over a fake file system, link
// resolution, and which layers apply with fake probes (namespaces working or not, seccomp
// working or not, --no-network, the Landlock-only switch).
import { Probes, planHardening } from '../../src/confine/hardening';
import { EntryKind, GrantLike, LinkView, buildMountPlan, resolveWithLinks } from '../../src/confine/mount-plan';
import type { NamespaceProbeResult } from '../../src/native';

/** A file system of paths -> kind, and links -> text. */
function fakeFs(entries: Record<string, EntryKind>, links: Record<string, string> = {}): LinkView {
  return {
    lstat: (p) => (p in links ? 'symlink' : entries[p]),
    readlink: (p) => links[p],
    readdir: (d) => [...Object.keys(entries), ...Object.keys(links)].filter((p) => p.startsWith(`${d}/`) && !p.slice(d.length + 1).includes('/')).map((p) => p.slice(d.length + 1)),
  };
}

const HOME = '/home/u';
const BASE: Record<string, EntryKind> = {
  '/run': 'directory',
  '/run/user': 'directory',
  '/run/user/1000': 'directory',
  '/tmp': 'directory',
  '/var': 'directory',
  '/var/tmp': 'directory',
  '/dev': 'directory',
  '/dev/shm': 'directory',
  '/dev/pts': 'directory',
  '/dev/null': 'device',
  '/dev/ptmx': 'device',
  '/home': 'directory',
  [HOME]: 'directory',
  [`${HOME}/.cache`]: 'directory',
  [`${HOME}/.cache/pip`]: 'directory',
  [`${HOME}/.gitconfig`]: 'file',
  [`${HOME}/.local`]: 'directory',
  [`${HOME}/.local/bin`]: 'directory',
  [`${HOME}/src`]: 'directory',
  [`${HOME}/src/proj.1`]: 'directory',
  '/etc': 'directory',
  '/usr': 'directory',
};

const w = (p: string, given?: string): GrantLike => ({ path: p, access: 'write', ...(given ? { given } : {}) });
const r = (p: string, given?: string): GrantLike => ({ path: p, access: 'read', ...(given ? { given } : {}) });

function ops(plan: ReturnType<typeof buildMountPlan>): string[] {
  return plan.ops.map((o) => `${o.kind} ${o.path}${o.target !== undefined ? ` -> ${o.target}` : ''}`);
}

describe('buildMountPlan', () => {
  const view = fakeFs({ ...BASE, '/var/run': 'symlink' }, { '/var/run': '../run' });

  it('masks /run, $XDG_RUNTIME_DIR and the home directory, makes /tmp and /dev/shm private, and binds back what is granted inside them', () => {
    const plan = buildMountPlan(
      {
        grants: [
          r('/etc'),
          r('/usr'),
          r('/run'), // around the home directory: must not bring /run back
          w('/tmp'),
          w('/var/tmp'),
          w('/dev/null'),
          w('/dev/pts'),
          w('/dev/ptmx'),
          w('/dev/shm'),
          w(`${HOME}/.cache`),
          r(`${HOME}/.gitconfig`),
          r(`${HOME}/.local/bin`),
          w(`${HOME}/src/proj.1`),
        ],
        homes: [HOME],
        runtimeDir: '/run/user/1000',
      },
      view,
    );
    expect(plan.readOnlyRoot).toBe(true);
    expect(ops(plan)).toEqual([
      'mask /run',
      'tmpfs /tmp',
      'devpts /dev/pts',
      'tmpfs /dev/shm',
      'mask /home/u',
      'bind-rw /var/tmp',
      'bind-rw /home/u/.cache',
      'bind-ro /home/u/.gitconfig',
      'bind-ro /home/u/.local/bin',
      'bind-rw /home/u/src/proj.1',
    ]);
  });

  it('binds back writable paths under the private /tmp (a fork or the broker socket directory there)', () => {
    const v = fakeFs({ ...BASE, '/tmp/work': 'directory', '/tmp/work/proj.2': 'directory', '/tmp/sock': 'directory' });
    const plan = buildMountPlan({ grants: [w('/tmp'), w('/tmp/work/proj.2'), w('/tmp/sock'), r('/tmp/work')], homes: [HOME] }, v);
    expect(ops(plan)).toEqual(['mask /run', 'tmpfs /tmp', 'devpts /dev/pts', 'tmpfs /dev/shm', 'mask /home/u', 'bind-rw /tmp/sock', 'bind-ro /tmp/work', 'bind-rw /tmp/work/proj.2']);
  });

  it('leaves out binds a bind above already gives, but not a writable one inside a read-only one', () => {
    const v = fakeFs({ ...BASE, [`${HOME}/ro`]: 'directory', [`${HOME}/ro/rw`]: 'directory' });
    const plan = buildMountPlan(
      { grants: [w(`${HOME}/.cache`), w(`${HOME}/.cache/pip`), r(`${HOME}/.cache/pip`), r(`${HOME}/ro`), w(`${HOME}/ro/rw`)], homes: [HOME] },
      v,
    );
    expect(ops(plan).filter((o) => o.startsWith('bind'))).toEqual(['bind-rw /home/u/.cache', 'bind-ro /home/u/ro', 'bind-rw /home/u/ro/rw']);
  });

  it('does not mask $XDG_RUNTIME_DIR again inside /run, nor mask what does not exist', () => {
    const v = fakeFs({ ...BASE, '/tmp': undefined as unknown as EntryKind });
    const plan = buildMountPlan({ grants: [], homes: [HOME, '/home/gone'], runtimeDir: '/run/user/1000' }, v);
    expect(ops(plan)).toEqual(['mask /run', 'devpts /dev/pts', 'tmpfs /dev/shm', 'mask /home/u']);
  });

  it('makes $TMPDIR private too, unless it is (in) the directory the command works in', () => {
    const v = fakeFs({ ...BASE, '/var/tmp/u': 'directory', [`${HOME}/src/proj.1/tmp`]: 'directory' });
    expect(ops(buildMountPlan({ grants: [w('/var/tmp'), w('/var/tmp/u')], homes: [HOME], tmpdir: '/var/tmp/u' }, v))).toContain('tmpfs /var/tmp/u');
    const inDir = buildMountPlan({ grants: [w(`${HOME}/src/proj.1`)], homes: [HOME], tmpdir: `${HOME}/src/proj.1/tmp`, dir: `${HOME}/src/proj.1` }, v);
    expect(ops(inDir).some((o) => o.startsWith('tmpfs /home'))).toBe(false);
  });

  it('a $TMPDIR under the private /tmp (pam_tmpdir) exists inside it, private too', () => {
    const v = fakeFs({ ...BASE, '/tmp/user': 'directory', '/tmp/user/1000': 'directory' });
    const plan = ops(buildMountPlan({ grants: [w('/tmp'), w('/tmp/user/1000')], homes: [HOME], tmpdir: '/tmp/user/1000' }, v));
    expect(plan).toContain('tmpfs /tmp');
    expect(plan).toContain('tmpfs /tmp/user/1000');
    expect(plan.indexOf('tmpfs /tmp')).toBeLessThan(plan.indexOf('tmpfs /tmp/user/1000'));
    expect(plan.some((o) => o.startsWith('bind-rw /tmp'))).toBe(false);
  });

  it('masks an $XDG_RUNTIME_DIR outside /run', () => {
    const v = fakeFs({ ...BASE, '/var/xdg': 'directory' });
    const plan = buildMountPlan({ grants: [], homes: [HOME], runtimeDir: '/var/xdg' }, v);
    expect(ops(plan)).toContain('mask /var/xdg');
  });

  it('lets a writable path given at a mask unmask it, but a private tmpfs stays private', () => {
    const plan = buildMountPlan({ grants: [w('/run/user/1000'), w('/tmp')], homes: [HOME], runtimeDir: '/run/user/1000' }, view);
    expect(ops(plan)).toEqual(['mask /run', 'tmpfs /tmp', 'devpts /dev/pts', 'tmpfs /dev/shm', 'mask /home/u', 'bind-rw /run/user/1000']);
  });

  it('makes again, inside a mask, the links on the way to a bound path', () => {
    const v = fakeFs(
      { ...BASE, [`${HOME}/dotfiles`]: 'directory', [`${HOME}/dotfiles/gitconfig`]: 'file', '/data': 'directory', '/data/git': 'directory' },
      { [`${HOME}/.gitconfig`]: 'dotfiles/gitconfig', [`${HOME}/.config`]: '/data' },
    );
    const plan = buildMountPlan(
      {
        grants: [r(`${HOME}/dotfiles/gitconfig`, `${HOME}/.gitconfig`), r('/data/git', `${HOME}/.config/git`)],
        homes: [HOME],
      },
      v,
    );
    expect(ops(plan)).toEqual([
      'mask /run',
      'tmpfs /tmp',
      'devpts /dev/pts',
      'tmpfs /dev/shm',
      'mask /home/u',
      'symlink /home/u/.config -> /data',
      'symlink /home/u/.gitconfig -> dotfiles/gitconfig',
      'bind-ro /home/u/dotfiles/gitconfig',
    ]);
  });

  it('gives the command a /dev/pts of its own, with its terminal bound at /dev/console', () => {
    const v = fakeFs({ ...BASE, '/dev/console': 'device', '/dev/pts/3': 'device' });
    const plan = buildMountPlan({ grants: [w('/dev/pts'), w('/dev/ptmx')], homes: [HOME], terminal: '/dev/pts/3' }, v);
    expect(plan.ops.filter((o) => o.path.startsWith('/dev/') && o.path !== '/dev/shm').map((o) => ({ kind: o.kind, path: o.path, source: o.source }))).toEqual([
      { kind: 'devpts', path: '/dev/pts', source: undefined },
      { kind: 'bind-rw', path: '/dev/console', source: '/dev/pts/3' },
    ]);
    expect(buildMountPlan({ grants: [], homes: [HOME], terminal: '/dev/tty1' }, v).ops.some((o) => o.path === '/dev/console')).toBe(false);
  });

  it('keeps read-only, inside writable caches, what runs outside later: $PATH entries, ~/.cargo/env and config; not in the directory', () => {
    const v = fakeFs({
      ...BASE,
      [`${HOME}/.cargo`]: 'directory',
      [`${HOME}/.cargo/bin`]: 'directory',
      [`${HOME}/.cargo/env`]: 'file',
      [`${HOME}/.cargo/env.fish`]: 'file',
      [`${HOME}/.cargo/env.nu`]: 'file',
      [`${HOME}/.cargo/config`]: 'file',
      [`${HOME}/.cargo/config.toml`]: 'file',
      [`${HOME}/src/proj.1/bin`]: 'directory',
    });
    const plan = buildMountPlan(
      {
        grants: [w(`${HOME}/.cargo`), w(`${HOME}/src/proj.1`), r(`${HOME}/.local/bin`), r(`${HOME}/.cargo/bin`)],
        homes: [HOME],
        pathVar: `${HOME}/.cargo/bin:${HOME}/.local/bin:${HOME}/src/proj.1/bin:/usr/bin:relative/bin`,
        dir: `${HOME}/src/proj.1`,
      },
      v,
    );
    expect(ops(plan).filter((o) => o.includes('/home/u/'))).toEqual([
      'bind-rw /home/u/.cargo',
      'bind-ro /home/u/.cargo/bin',
      'bind-ro /home/u/.cargo/config',
      'bind-ro /home/u/.cargo/config.toml',
      'bind-ro /home/u/.cargo/env',
      'bind-ro /home/u/.cargo/env.fish',
      'bind-ro /home/u/.cargo/env.nu',
      'bind-ro /home/u/.local/bin',
      'bind-rw /home/u/src/proj.1',
    ]);
  });

  it('whatever PATH is, and whether they exist or not: a file of the caches table that is missing cannot be made (its directory read-only, what it holds bound back)', () => {
    const v = fakeFs(
      {
        ...BASE,
        [`${HOME}/.cargo`]: 'directory',
        [`${HOME}/.cargo/bin`]: 'directory',
        [`${HOME}/.cargo/registry`]: 'directory',
        [`${HOME}/.cargo/.package-cache`]: 'file',
        [`${HOME}/.cargo/config.toml`]: 'file',
        [`${HOME}/.rustup`]: 'directory',
        [`${HOME}/.rustup/toolchains`]: 'directory',
        [`${HOME}/.rustup/settings.toml`]: 'file',
        [`${HOME}/.rustup/downloads`]: 'directory',
        [`${HOME}/.npm`]: 'directory',
        [`${HOME}/.npm/_npx`]: 'directory',
        [`${HOME}/.npm/_cacache`]: 'directory',
      },
      { [`${HOME}/.cargo/planted`]: '/home/u/.ssh' },
    );
    const plan = buildMountPlan({ grants: [w(`${HOME}/.cargo`), w(`${HOME}/.rustup`), w(`${HOME}/.npm`), w(`${HOME}/src/proj.1`)], homes: [HOME], pathVar: '/usr/bin', dir: `${HOME}/src/proj.1` }, v);
    expect(ops(plan).filter((o) => o.includes('/home/u/.'))).toEqual([
      // ~/.cargo/config, env… are missing: ~/.cargo is read-only, what is in it bound back (not
      // the link: binding it would follow it), bin and config.toml left read-only.
      'bind-ro /home/u/.cargo',
      'bind-rw /home/u/.npm',
      'bind-rw /home/u/.rustup',
      'bind-rw /home/u/.cargo/.package-cache',
      'bind-rw /home/u/.cargo/registry',
      'bind-ro /home/u/.npm/_npx',
      'bind-ro /home/u/.rustup/settings.toml',
      'bind-ro /home/u/.rustup/toolchains',
    ]);
  });

  it('a name of the caches table that is a link into what the command may write: kept from changing, and said', () => {
    const v = fakeFs(
      { ...BASE, [`${HOME}/.cargo`]: 'directory', [`${HOME}/.cargo/registry`]: 'directory', [`${HOME}/src/proj.1/evil.toml`]: 'file' },
      { [`${HOME}/.cargo/config.toml`]: '/home/u/src/proj.1/evil.toml' },
    );
    const plan = buildMountPlan({ grants: [w(`${HOME}/.cargo`), w(`${HOME}/src/proj.1`)], homes: [HOME], pathVar: '/usr/bin', dir: `${HOME}/src/proj.1` }, v);
    expect(ops(plan)).toContain('bind-ro /home/u/.cargo');
    expect(ops(plan)).not.toContain('bind-rw /home/u/.cargo');
    expect(plan.warnings).toEqual([expect.stringMatching(/^\/home\/u\/.cargo\/config.toml is a link to \/home\/u\/src\/proj.1\/evil.toml, which the command may write: what runs it later outside \(cargo: cargo configuration/)]);
  });

  it('needs nothing for list grants, and keeps / writable when / itself is given with -w', () => {
    const plan = buildMountPlan({ grants: [{ path: '/', access: 'list' }, w('/')], homes: [HOME] }, view);
    expect(plan.readOnlyRoot).toBe(false);
    expect(ops(plan).some((o) => o.endsWith(' /'))).toBe(false);
  });

  it('skips grants that do not exist (any more)', () => {
    const plan = buildMountPlan({ grants: [w(`${HOME}/.npm`)], homes: [HOME] }, view);
    expect(ops(plan).filter((o) => o.startsWith('bind'))).toEqual([]);
  });
});

describe('resolveWithLinks', () => {
  it('follows relative and absolute links, chains and .. as the kernel does', () => {
    const v = fakeFs({ '/a': 'directory', '/a/b': 'directory', '/c': 'directory', '/c/d': 'file' }, { '/a/l1': '../x', '/x': 'c/d', '/a/b/up': '/a/l1' });
    expect(resolveWithLinks('/a/b/up', v)).toEqual({
      real: '/c/d',
      links: [
        { location: '/a/b/up', target: '/a/l1' },
        { location: '/a/l1', target: '../x' },
        { location: '/x', target: 'c/d' },
      ],
    });
    expect(resolveWithLinks('/a/b/../b/./missing', v)).toEqual({ real: '/a/b/missing', links: [] });
  });

  it('stops at 40 links, as ELOOP would', () => {
    const v = fakeFs({}, { '/loop': '/loop' });
    expect(resolveWithLinks('/loop', v).links).toHaveLength(40);
  });
});

describe('planHardening', () => {
  const grants = [w('/tmp'), w(`${HOME}/src/proj.1`)];
  function probes(ns: NamespaceProbeResult, seccomp = true): Probes & { calls: number } {
    const p = {
      calls: 0,
      namespaces: () => {
        p.calls++;
        return ns;
      },
      seccomp: () => seccomp,
    };
    return p;
  }
  const input = { grants, homes: [HOME], env: {}, noNetwork: false, abi: 7, uid: 1000, gid: 1000 };

  it('uses namespaces where they work: user, mount, PID, and the mount plan; seccomp for the terminal; no warning', () => {
    const p = probes({ ok: true });
    const h = planHardening(input, p);
    expect(h.mode).toBe('namespaces');
    expect(h.namespaces).toMatchObject({ pid: true, net: false, uid: 1000, gid: 1000, readOnlyRoot: true });
    expect(h.namespaces?.mounts.map((m) => m.kind)).toContain('mask');
    expect(h.seccomp).toEqual({ denyTerminalInjection: true, denyNetwork: false });
    expect(h.landlockNet).toBe(0n);
    expect(h.warnings).toEqual([]);
    expect(h.network).toMatch(/^open/);
  });

  it('probes each time it plans: no cache decides for a later run', () => {
    const p = probes({ ok: true });
    planHardening(input, p);
    expect(p.calls).toBe(1);
    planHardening(input, p);
    expect(p.calls).toBe(2);
  });

  it('bwrap: bubblewrap makes the namespaces, so nothing is probed and nothing falls back; --no-network is its network namespace', () => {
    const p = probes({ ok: false, syscall: 'unshare', code: 'EPERM', errno: 1 });
    const h = planHardening({ ...input, jail: 'bwrap', noNetwork: true, env: { ARB_CONFINE_NO_NAMESPACES: '1' } }, p);
    expect(p.calls).toBe(0);
    expect(h.mode).toBe('namespaces');
    expect(h.landlockNet).toBe(0n);
    expect(h.network).toMatch(/loopback only \(bubblewrap's network namespace\)/);
    expect(h.warnings).toEqual([]);
  });

  it('--no-network with namespaces: a network namespace, no Landlock TCP rule (loopback stays usable)', () => {
    const h = planHardening({ ...input, noNetwork: true }, probes({ ok: true }));
    expect(h.namespaces?.net).toBe(true);
    expect(h.landlockNet).toBe(0n);
    expect(h.seccomp?.denyNetwork).toBe(false);
    expect(h.network).toMatch(/loopback only/);
  });

  it('falls back to Landlock alone where namespaces fail, and says why once', () => {
    const h = planHardening(input, probes({ ok: false, syscall: 'mount', path: '/tmp', code: 'EPERM', errno: 1 }));
    expect(h.mode).toBe('landlock-only');
    expect(h.namespaces).toBeUndefined();
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/Landlock alone: user namespaces do not work here \(mount \/tmp: EPERM\)/);
    expect(h.seccomp).toEqual({ denyTerminalInjection: true, denyNetwork: false });
  });

  it('--no-network without namespaces: Landlock TCP rights handled, seccomp denies other sockets, and a warning says what stays open', () => {
    const h = planHardening({ ...input, noNetwork: true }, probes({ ok: false, syscall: 'unshare', code: 'EPERM', errno: 1 }));
    expect(h.landlockNet).toBe(3n);
    expect(h.seccomp).toEqual({ denyTerminalInjection: true, denyNetwork: true });
    expect(h.warnings.join('\n')).toMatch(/--no-network without a network namespace.*still open: unix sockets outside/);
  });

  it('--no-network refuses when neither namespaces, Landlock TCP (ABI 4) nor seccomp can enforce it', () => {
    expect(() => planHardening({ ...input, noNetwork: true, abi: 3 }, probes({ ok: false, code: 'EPERM' }, false))).toThrow(/--no-network cannot be enforced here/);
  });

  it('ARB_CONFINE_NO_NAMESPACES=1 and --landlock-only force Landlock alone without probing', () => {
    for (const extra of [{ env: { ARB_CONFINE_NO_NAMESPACES: '1' } }, { landlockOnly: true }]) {
      const p = probes({ ok: true });
      const h = planHardening({ ...input, ...extra }, p);
      expect(p.calls).toBe(0);
      expect(h.mode).toBe('landlock-only');
      expect(h.warnings[0]).toMatch(/turned off by (ARB_CONFINE_NO_NAMESPACES=1|--landlock-only)/);
    }
    expect(planHardening({ ...input, env: { ARB_CONFINE_NO_NAMESPACES: '0' } }, probes({ ok: true })).mode).toBe('namespaces');
  });

  it('says so when seccomp does not work, and leaves the seccomp layer out', () => {
    const h = planHardening(input, probes({ ok: true }, false));
    expect(h.seccomp).toBeUndefined();
    expect(h.warnings.join('\n')).toMatch(/seccomp filters do not work here/);
    expect(h.layers.find((l) => l.name === 'seccomp')?.enforced).toBe(false);
  });
});
