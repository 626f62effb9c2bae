// The bwrap jail: its argument list, built purely from the one mount plan
// (src/confine/mount-plan.ts), rendered the same way the launcher's namespaces render it; then
// the jail itself tried for real through `arb confine --jail bwrap`, as the unprivileged test
// user, in allowed/denied pairs that assert the errno (a masked home answers ENOENT, a read-only
// mount EROFS, Landlock inside EACCES).
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

import { BwrapPlan, RootEntry, bwrapArgs, exitCodeFromStatus, findBwrap, visibleInJail } from '../../src/confine/bwrap';
import { EntryKind, GrantLike, LinkView, MountPlan, buildMountPlan, bwrapMountArgs, jailDevice, launcherMounts } from '../../src/confine/mount-plan';
import { MountSpec, parseMounts } from '../../src/confine/mounts';
import type { MountOpSpec } from '../../src/native';
import { ArbError } from '../../src/errors';
import { itIf, testEnv } from '../helpers/env';
import { arbAsUser } from '../helpers/run';
import { ProbeRun, answer, confineProbe, removeUserArea, userDir, userFile } from './confine-helpers';

const HOME = '/home/u';

const ROOT: RootEntry[] = [
  { name: 'usr', kind: 'other' },
  { name: 'bin', kind: 'link', target: 'usr/bin' },
  { name: 'etc', kind: 'other' },
  { name: 'home', kind: 'other' },
  { name: 'dev', kind: 'other' },
  { name: 'proc', kind: 'other' },
  { name: 'tmp', kind: 'other' },
  { name: 'run', kind: 'other' },
  { name: 'sys', kind: 'other' },
];

interface Given {
  dir?: string;
  homes?: string[];
  readable?: string[];
  writable?: string[];
  /** Links in the fake file system: a granted path named through one (grant.given). */
  links?: { location: string; target: string; grant?: string }[];
  files?: Record<string, EntryKind>;
  pathVar?: string;
  runtimeDir?: string;
  keepUnderRun?: string[];
  tmpdir?: string;
  userMounts?: MountSpec[];
  shareNetwork?: boolean;
  file?: string;
  args?: string[];
  statusFd?: number;
}

/** A fake file system in which every path named exists (a directory, unless said otherwise). */
function view(g: Given): LinkView {
  const kinds: Record<string, EntryKind> = { '/dev/pts': 'directory', '/dev/console': 'device', '/tmp': 'directory', '/dev/shm': 'directory', '/run': 'directory', '/home/u/.gitconfig': 'file', '/run/systemd/resolve/stub-resolv.conf': 'file', ...g.files };
  const dirs = [...(g.homes ?? [HOME]), ...(g.readable ?? []), ...(g.writable ?? []), g.dir ?? '/home/u/src/proj.1', g.runtimeDir, g.tmpdir];
  for (const d of dirs) if (d) for (let p = d; p !== '/'; p = path.dirname(p)) kinds[p] ??= 'directory';
  const links = Object.fromEntries((g.links ?? []).map((l) => [l.location, l.target]));
  return { lstat: (p) => (p in links ? 'symlink' : kinds[p]), readlink: (p) => links[p] };
}

function mountPlan(g: Given): MountPlan {
  const dir = g.dir ?? '/home/u/src/proj.1';
  const grants: GrantLike[] = [
    ...(g.readable ?? []).map((p): GrantLike => ({ path: p, access: 'read' })),
    ...(g.writable ?? []).map((p): GrantLike => ({ path: p, access: 'write' })),
    ...(g.links ?? []).filter((l) => l.grant).map((l): GrantLike => ({ path: l.grant as string, access: 'read', given: l.location })),
    { path: dir, access: 'write' },
  ];
  return buildMountPlan(
    { grants, homes: g.homes ?? [HOME], dir, runtimeDir: g.runtimeDir, keepUnderRun: g.keepUnderRun, pathVar: g.pathVar, tmpdir: g.tmpdir, tmpSize: 1 << 30, terminal: '/dev/pts/3' },
    view(g),
  );
}

function plan(g: Given = {}): BwrapPlan {
  return {
    dir: g.dir ?? '/home/u/src/proj.1',
    homes: g.homes ?? [HOME],
    mounts: mountPlan({
      readable: ['/home/u/.gitconfig', '/home/u/.config/git', '/home/u/.local/bin', '/home/u/.claude.json'],
      writable: ['/tmp', '/var/tmp', '/dev/shm', '/dev/null', '/home/u/.cache', '/home/u/.npm'],
      files: { '/home/u/.claude.json': 'file', '/dev/null': 'device' },
      ...g,
    }),
    root: ROOT,
    userMounts: g.userMounts,
    shareNetwork: g.shareNetwork ?? true,
    file: g.file ?? '/opt/arb/arb-launcher',
    args: g.args ?? ['--plan-fd', '4', '--report-fd', '5'],
    statusFd: g.statusFd,
  };
}

/** The options (with their values) in order, as pairs easy to look for. */
function steps(args: string[]): string[] {
  const out: string[] = [];
  const arity: Record<string, number> = {
    '--ro-bind': 2, '--ro-bind-try': 2, '--bind': 2, '--bind-try': 2, '--symlink': 2, '--setenv': 2,
    '--tmpfs': 1, '--dev': 1, '--proc': 1, '--remount-ro': 1, '--chdir': 1, '--perms': 1, '--size': 1, '--json-status-fd': 1, '--dir': 1,
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

/** bwrap's arguments read back as mount operations, to compare with the launcher's. */
function opsFromBwrap(args: string[]): MountOpSpec[] {
  const ops: MountOpSpec[] = [];
  let mode: number | undefined;
  let size: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--perms') mode = parseInt(args[++i], 8);
    else if (a === '--size') size = Number(args[++i]);
    else if (a === '--tmpfs') {
      const p = args[++i];
      // A mask is remounted read-only at the end; a private tmpfs is not.
      const kind = args.includes('--remount-ro') && args.some((x, j) => x === '--remount-ro' && args[j + 1] === p) ? 'mask' : 'tmpfs';
      ops.push({ kind, path: p, ...(size ? { size } : {}), ...(mode !== undefined && mode !== (kind === 'mask' ? 0o755 : 0o1777) ? { mode } : {}) });
      mode = size = undefined;
    } else if (a === '--bind-try' || a === '--ro-bind-try') {
      const [src, dest] = [args[++i], args[++i]];
      ops.push({ kind: a === '--bind-try' ? 'bind-rw' : 'bind-ro', path: dest, ...(src !== dest ? { source: src } : {}) });
    } else if (a === '--symlink' && !['/bin', '/lib', '/lib64', '/sbin'].includes(args[i + 2])) {
      const [target, at] = [args[++i], args[++i]];
      ops.push({ kind: 'symlink', path: at, target });
    } else if (a === '--symlink' || a === '--ro-bind' || a === '--bind') i += 2;
    else if (a === '--') break;
  }
  return ops;
}

describe('one mount plan, rendered for the launcher and for bwrap', () => {
  const cases: [string, Given][] = [
    ['the defaults', {}],
    ['a project under /tmp, $TMPDIR, $XDG_RUNTIME_DIR outside /run', { dir: '/tmp/xfs/proj.2', tmpdir: '/var/tmp/me', runtimeDir: '/var/xdg' }],
    ['caches on $PATH, a link to dotfiles, the resolver under /run', {
      pathVar: '/home/u/.cargo/bin:/usr/bin',
      writable: ['/home/u/.cargo'],
      files: { '/home/u/.cargo/bin': 'directory', '/home/u/dotfiles/gitconfig': 'file' },
      links: [{ location: '/home/u/.gitconfig', target: 'dotfiles/gitconfig', grant: '/home/u/dotfiles/gitconfig' }],
      keepUnderRun: ['/run/systemd/resolve/stub-resolv.conf'],
    }],
  ];
  it.each(cases)('the same operations either way (%s), but what bwrap --dev makes itself', (_label, g) => {
    const mp = mountPlan(g);
    const launcher = launcherMounts(mp).filter((op) => !jailDevice(op));
    const bwrap = opsFromBwrap(bwrapArgs({ ...plan(g), mounts: mp }));
    expect(bwrap).toEqual(launcher);
    // And what is left out is only a devpts and the terminal at /dev/console.
    expect(launcherMounts(mp).filter(jailDevice).map((op) => op.path).sort()).toEqual(['/dev/console', '/dev/pts']);
  });

  it('binds readable paths under the private /tmp back, and keeps a $TMPDIR in it, both ways', () => {
    // An npm prefix under /tmp on $PATH and its programs' package (policy.ts grants them), and
    // pam_tmpdir's $TMPDIR: without these steps they would vanish under the private /tmp.
    const g: Given = {
      pathVar: '/tmp/npm/bin:/usr/bin',
      readable: ['/tmp/npm/bin', '/tmp/npm/lib/node_modules/@openai/codex'],
      tmpdir: '/tmp/user/1000',
      files: { '/tmp/npm/bin': 'directory', '/tmp/npm/lib/node_modules/@openai/codex': 'directory', '/tmp/user/1000': 'directory' },
    };
    const mp = mountPlan(g);
    const launcher = launcherMounts(mp).filter((op) => !jailDevice(op));
    expect(opsFromBwrap(bwrapArgs({ ...plan(g), mounts: mp }))).toEqual(launcher);
    const shown = launcher.map((op) => `${op.kind} ${op.path}`);
    for (const want of ['tmpfs /tmp', 'bind-ro /tmp/npm/bin', 'bind-ro /tmp/npm/lib/node_modules/@openai/codex', 'tmpfs /tmp/user/1000']) expect(shown).toContain(want);
    expect(shown.indexOf('tmpfs /tmp')).toBeLessThan(shown.indexOf('bind-ro /tmp/npm/bin'));
    expect(shown.indexOf('tmpfs /tmp')).toBeLessThan(shown.indexOf('tmpfs /tmp/user/1000'));
    expect(shown.filter((o) => o.startsWith('bind-rw /tmp'))).toEqual([]);
  });

  it('gives every private tmpfs its size limit, both ways', () => {
    const mp = mountPlan({ tmpdir: '/var/tmp/me' });
    const tmpfs = launcherMounts(mp).filter((op) => op.kind === 'tmpfs');
    expect(tmpfs.map((op) => op.path)).toEqual(['/tmp', '/dev/shm', '/var/tmp/me']);
    for (const op of tmpfs) expect(op.size).toBe(1 << 30);
    expect(steps(bwrapMountArgs(mp))).toEqual(expect.arrayContaining(['--size 1073741824', '--tmpfs /var/tmp/me']));
  });
});

describe('bwrapArgs', () => {
  const s = steps(bwrapArgs(plan()));

  it('unshares every namespace but the network, in a new session, dying with arb', () => {
    expect(s.slice(0, 4)).toEqual(['--unshare-all', '--share-net', '--die-with-parent', '--new-session']);
  });

  it('--no-network: the network namespace too (loopback only)', () => {
    expect(steps(bwrapArgs(plan({ shareNetwork: false }))).slice(0, 3)).toEqual(['--unshare-all', '--die-with-parent', '--new-session']);
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
    // Read-only at the end, once every mount point is made; then the launcher runs.
    expect(s.slice(-3)).toEqual(['--remount-ro /', '--chdir /home/u/src/proj.1', '-- /opt/arb/arb-launcher --plan-fd 4 --report-fd 5']);
  });

  it('masks the home with an empty private file system, then binds back the policy paths', () => {
    const mask = s.indexOf(`--tmpfs ${HOME}`);
    expect(s[mask - 1]).toBe('--perms 0700');
    const after = s.slice(mask + 1);
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

  it('runs the launcher in the directory, after --, with its own arguments', () => {
    expect(s).toContain('--chdir /home/u/src/proj.1');
    const raw = bwrapArgs(plan({ args: ['--plan-fd', '4', '-d'] }));
    expect(raw.slice(raw.indexOf('--'))).toEqual(['--', '/opt/arb/arb-launcher', '--plan-fd', '4', '-d']);
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
    const t = steps(bwrapArgs(plan({ userMounts: parseMounts(['rw:/srv/data:/data', 'ro:/srv/ref', 'tmpfs:/tmp', 'dev:/dev', 'proc:/proc']) })));
    const at = (x: string) => t.indexOf(x);
    const order = ['--bind /srv/data /data', '--ro-bind /srv/ref /srv/ref', '--tmpfs /tmp', '--dev /dev', '--proc /proc'].map((x) => t.lastIndexOf(x));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBeGreaterThan(at('--bind-try /home/u/src/proj.1 /home/u/src/proj.1'));
    expect(order[4]).toBeLessThan(at('--remount-ro /'));
  });

  it('masks /run, keeping the resolver configuration; $XDG_RUNTIME_DIR in it goes with it, as in the launcher', () => {
    const t = steps(bwrapArgs(plan({ keepUnderRun: ['/run/systemd/resolve/stub-resolv.conf', '/etc/not-under-run'], runtimeDir: '/run/user/1000' })));
    expect(t.indexOf('--ro-bind-try /run/systemd/resolve/stub-resolv.conf /run/systemd/resolve/stub-resolv.conf')).toBeGreaterThan(t.indexOf('--tmpfs /run'));
    expect(t.join('\n')).not.toContain('/etc/not-under-run');
    expect(t.join('\n')).not.toContain('/run/user/1000');
    expect(t).toContain('--remount-ro /run');
    // One outside /run is masked on its own.
    expect(steps(bwrapArgs(plan({ runtimeDir: '/var/xdg' })))).toContain('--remount-ro /var/xdg');
  });

  it('does not remount read-only a mask that something was mounted on or over', () => {
    // -d ~ : the home is the directory, writable: no mask at all.
    const t = steps(bwrapArgs(plan({ dir: HOME })));
    expect(t).toContain(`--bind-try ${HOME} ${HOME}`);
    expect(t).not.toContain(`--remount-ro ${HOME}`);
    const r = steps(bwrapArgs(plan({ userMounts: parseMounts(['rw:/srv/run:/run']) })));
    expect(r).not.toContain('--remount-ro /run');
    expect(r).toContain('--remount-ro /');
  });

  it("masks every home directory (the user's and $HOME), once when one holds the other", () => {
    const t = steps(bwrapArgs(plan({ homes: ['/home/u', '/srv/h', '/home/u/sub'] })));
    expect(t.filter((x) => x.startsWith('--tmpfs /home') || x.startsWith('--tmpfs /srv'))).toEqual(['--tmpfs /home/u', '--tmpfs /srv/h']);
    expect(t).toContain('--remount-ro /srv/h');
  });

  it('remakes links inside a mask that lead to a bound path, and binds the path', () => {
    const t = steps(
      bwrapArgs(
        plan({
          files: { '/home/u/dotfiles/gitconfig': 'file' },
          links: [{ location: '/home/u/.gitconfig', target: 'dotfiles/gitconfig', grant: '/home/u/dotfiles/gitconfig' }],
        }),
      ),
    );
    // A link may be made before its target is bound (parents first, by depth): it resolves once all is mounted.
    expect(t.indexOf('--symlink dotfiles/gitconfig /home/u/.gitconfig')).toBeGreaterThan(t.indexOf(`--tmpfs ${HOME}`));
    expect(t).toContain('--ro-bind-try /home/u/dotfiles/gitconfig /home/u/dotfiles/gitconfig');
  });

  it("never brings back /run, /tmp or a home from the policy's grants of reading around the home", () => {
    // The policy grants reading to every entry of / but /home: /run and /tmp among them.
    const t = steps(bwrapArgs(plan({ readable: ['/run', '/tmp', '/etc', '/home/other', '/home/u/.gitconfig'] })));
    expect(t.join('\n')).not.toMatch(/--ro-bind(-try)? \/run /);
    expect(t.join('\n')).not.toMatch(/--ro-bind(-try)? \/tmp /);
    expect(t).toContain('--remount-ro /run');
  });

  it('leaves paths inside a writable one to it (no second bind to follow a planted link)', () => {
    const t = steps(bwrapArgs(plan({ readable: ['/home/u/.cache/tool'], writable: ['/home/u/.cache', '/home/u/.cache/opencode'] })));
    expect(t.filter((x) => x.includes('/home/u/.cache'))).toEqual(['--bind-try /home/u/.cache /home/u/.cache']);
  });

  it('keeps what runs later read-only inside a writable cache, after it; given writable itself (-w), it stays writable', () => {
    const files: Record<string, EntryKind> = { '/home/u/.cargo/bin': 'directory' };
    for (const f of ['env', 'env.fish', 'env.nu', 'config', 'config.toml']) files[`/home/u/.cargo/${f}`] = 'file';
    const g: Given = { pathVar: '/usr/bin', writable: ['/home/u/.cargo'], files };
    const t = steps(bwrapArgs(plan(g)));
    expect(t.indexOf('--ro-bind-try /home/u/.cargo/bin /home/u/.cargo/bin')).toBeGreaterThan(t.indexOf('--bind-try /home/u/.cargo /home/u/.cargo'));
    expect(t).toContain('--ro-bind-try /home/u/.cargo/config /home/u/.cargo/config');
    const w = steps(bwrapArgs(plan({ ...g, writable: ['/home/u/.cargo', '/home/u/.cargo/bin'] })));
    expect(w).not.toContain('--ro-bind-try /home/u/.cargo/bin /home/u/.cargo/bin');
    // Without ~/.cargo/config yet: ~/.cargo itself read-only, so that it cannot be made.
    const missing = steps(bwrapArgs(plan({ ...g, files: { '/home/u/.cargo/bin': 'directory' } })));
    expect(missing).toContain('--ro-bind-try /home/u/.cargo /home/u/.cargo');
    expect(missing).not.toContain('--bind-try /home/u/.cargo /home/u/.cargo');
  });

  it('adds the status descriptor when asked', () => {
    expect(steps(bwrapArgs(plan({ statusFd: 3 })))).toContain('--json-status-fd 3');
    expect(bwrapArgs(plan())).not.toContain('--json-status-fd');
  });

  it('refuses a home that is / or relative, rather than masking everything or nothing', () => {
    expect(() => bwrapArgs({ ...plan(), homes: ['/'] })).toThrow(ArbError);
    expect(() => bwrapArgs({ ...plan(), homes: ['u'] })).toThrow(/cannot mask the home directory 'u'/);
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
    expect(visibleInJail('/home/u/scripts/tool', { ...p, userMounts: parseMounts(['ro:/home/u/scripts']) })).toBe(true);
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
      // Not where the command could write (a bwrap there would run outside, as you).
      expect(() => findBwrap(`/nonexistent:${dir}`, [], [dir])).toThrow(
        `cannot use the bwrap jail: the only bwrap found, '${path.join(dir, 'bwrap')}', is where the confined command may write, and bwrap runs outside, as you`,
      );
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
          [`create:${home}/.cargo/registry/new-file`]: 'OK',
          [`create:${home}/.cargo/config`]: 'EROFS',
          [`create:${home}/.cargo/config.toml`]: 'EROFS',
          [`exec:${bin}/cargo`]: 'OK',
        },
        [],
        { env: { PATH: `${bin}:/usr/bin:/bin` } },
      );
      expect(fs.existsSync(path.join(bin, 'planted'))).toBe(false);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
      fs.rmSync(path.join(home, '.cargo', 'env'), { force: true });
      fs.rmSync(path.join(home, '.cargo', 'registry', 'new-file'), { force: true });
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

  jailTest('--no-network: loopback only (its own listener works, one outside is refused); without it, open', async () => {
    const dir = userDir('bw-net');
    const server = net.createServer((c) => c.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      // The kernel completes a connection to a listening socket without accept(), so this
      // process need not run its event loop while the probe runs.
      bwrapProbe(dir, { [`tcp:${port}`]: 'ECONNREFUSED', 'tcpown:': 'OK' }, ['--no-network']);
      bwrapProbe(dir, { [`tcp:${port}`]: 'OK', 'tcpown:': 'OK' });
    } finally {
      server.close();
    }
  });

  jailTest('$TMPDIR is private, as in the landlock jail', () => {
    const dir = userDir('bw-tmpdir');
    const tmpdir = userDir('bw-tmpdir-host');
    userFile(path.join(tmpdir, 'agent.sock.txt'), 'host\n');
    bwrapProbe(dir, { [`read:${tmpdir}/agent.sock.txt`]: 'ENOENT', [`create:${tmpdir}/mine`]: 'OK' }, [], { env: { TMPDIR: tmpdir } });
    expect(fs.existsSync(path.join(tmpdir, 'mine'))).toBe(false);
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
