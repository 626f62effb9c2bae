// The bwrap argument list, built purely from a plan. The jail itself is tried for real, as the
// unprivileged user, in test/confine/bwrap-jail.test.ts.
import { BwrapPlan, bwrapArgs, exitCodeFromStatus, findBwrap, isUnder, policyBinds, visibleInJail } from '../../src/confine/bwrap';
import { parseMounts } from '../../src/confine/mounts';
import { ArbError } from '../../src/errors';

const HOME = '/home/u';

function plan(over: Partial<BwrapPlan> = {}): BwrapPlan {
  return {
    dir: '/home/u/src/proj.1',
    home: HOME,
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

  it('adds the status descriptor when asked', () => {
    expect(steps(bwrapArgs(plan({ statusFd: 3 })))).toContain('--json-status-fd 3');
    expect(bwrapArgs(plan())).not.toContain('--json-status-fd');
  });

  it('refuses a home that is / or relative, rather than masking everything or nothing', () => {
    expect(() => bwrapArgs(plan({ home: '/' }))).toThrow(ArbError);
    expect(() => bwrapArgs(plan({ home: 'u' }))).toThrow(/cannot mask the home directory 'u'/);
  });
});

describe('policyBinds', () => {
  it('binds readable paths only where the jail hides the host, writable ones always', () => {
    const b = policyBinds({ dir: '/w/p', home: HOME, readable: ['/opt/x', '/home/u/.gitconfig', '/tmp/r'], writable: ['/srv/out'] });
    expect(b).toEqual([
      { path: '/srv/out', write: true },
      { path: '/tmp/r', write: false },
      { path: '/w/p', write: true },
      { path: '/home/u/.gitconfig', write: false },
    ]);
  });

  it('leaves paths inside a writable one to it (no second bind to follow a planted link)', () => {
    const b = policyBinds({ dir: '/w/p', home: HOME, readable: ['/home/u/.cache/tool'], writable: ['/home/u/.cache', '/home/u/.cache/opencode', '/w/p/sub'] });
    expect(b.map((x) => x.path)).toEqual(['/w/p', '/home/u/.cache']);
  });

  it('binds a writable path inside a readable one after it, and a path in both lists once, writable', () => {
    const b = policyBinds({ dir: '/w/p', home: HOME, readable: ['/home/u/.config/opencode', '/home/u/.x'], writable: ['/home/u/.config/opencode/state', '/home/u/.x'] });
    expect(b).toEqual([
      { path: '/w/p', write: true },
      { path: '/home/u/.x', write: true },
      { path: '/home/u/.config/opencode', write: false },
      { path: '/home/u/.config/opencode/state', write: true },
    ]);
  });

  it('ignores relative paths and normalizes the rest', () => {
    const b = policyBinds({ dir: '/w/p/', home: HOME, readable: ['rel', '/home/u/./a/'], writable: [] });
    expect(b.map((x) => x.path)).toEqual(['/w/p', '/home/u/a']);
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
  it('names the package when bwrap is missing', () => {
    // /usr/bin is always looked in, so this can only be checked where bwrap is not there.
    const fs = require('node:fs') as typeof import('node:fs');
    if (fs.existsSync('/usr/bin/bwrap') || fs.existsSync('/bin/bwrap')) {
      expect(findBwrap('/nonexistent')).toMatch(/\/bwrap$/);
      return;
    }
    expect(() => findBwrap('/nonexistent')).toThrow(/bubblewrap/);
  });
});
