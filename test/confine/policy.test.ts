// The policy's decisions, over a fake file system: what is granted around the home directory,
// which default paths are kept or skipped, how links are resolved and refused.
import * as path from 'node:path';

import * as fs from 'node:fs';
import * as os from 'node:os';

import { FsView, Grant, HOME_READABLE, HOME_WRITABLE, ancestors, buildPolicy, canRead, ensureHomeCaches, holdsHome, packageOf, protectedHomes } from '../../src/confine/policy';
import { isInside } from '../../src/paths/inside';

/** A fake tree: directories list their names; links resolve to their target (absolute). */
function fakeFs(dirs: Record<string, string[]>, links: Record<string, string> = {}, files: string[] = [], executables: string[] = []): FsView {
  const realpath = (p: string): string | undefined => {
    // Resolve component by component, as the kernel would.
    const parts = p.split('/').filter(Boolean);
    let cur = '/';
    for (let i = 0; i < parts.length; i++) {
      const next = cur === '/' ? `/${parts[i]}` : `${cur}/${parts[i]}`;
      if (links[next] !== undefined) {
        const rest = parts.slice(i + 1).join('/');
        return realpath(rest ? `${links[next]}/${rest}` : links[next]);
      }
      const parentNames = dirs[cur];
      if (!parentNames || !parentNames.includes(parts[i])) return undefined;
      cur = next;
    }
    return cur;
  };
  return {
    realpath,
    readdir: (p) => dirs[p],
    isDirectory: (p) => {
      const r = realpath(p);
      return r !== undefined && dirs[r] !== undefined && !files.includes(r);
    },
    isExecutableFile: (p) => {
      const r = realpath(p);
      return r !== undefined && executables.includes(r);
    },
  };
}

const TREE: Record<string, string[]> = {
  '/': ['bin', 'etc', 'home', 'tmp', 'usr', 'var', 'data', 'h', 'dangling'],
  '/etc': ['passwd'],
  '/home': ['me', 'other'],
  '/home/me': ['.ssh', '.gitconfig', '.cache', '.local', 'src', '.cargo', 'notes.txt', 'bin'],
  '/home/me/.ssh': ['id_ed25519'],
  '/home/me/.cache': [],
  '/home/me/.cargo': ['bin'],
  '/home/me/.cargo/bin': [],
  '/home/me/.local': ['bin'],
  '/home/me/.local/bin': [],
  '/home/me/src': ['proj'],
  '/home/me/src/proj': [],
  '/home/me/bin': [],
  '/home/other': [],
  '/tmp': [],
  '/usr': ['bin'],
  '/usr/bin': [],
  '/var': ['tmp'],
  '/var/tmp': [],
  '/dev': ['null', 'pts'],
  '/dev/pts': [],
};
const LINKS = {
  '/bin': '/usr/bin',
  '/data': '/home/me/.ssh', // a link into the home directory
  '/h': '/home', // a link above it
  '/dangling': '/nowhere',
};
// /dev is not listed in / above, but its devices exist for the writable defaults.
TREE['/'].push('dev');
TREE['/dev'].push('zero', 'tty');
const FILES = ['/home/me/.gitconfig', '/home/me/notes.txt', '/etc/passwd', '/dev/null', '/dev/zero', '/dev/tty'];
for (const f of FILES) TREE[f] = [];

const view = fakeFs(TREE, LINKS, FILES);

function grantsOf(grants: Grant[], access?: Grant['access']): string[] {
  return grants.filter((g) => !access || g.access === access).map((g) => g.path);
}

describe('policy: helpers', () => {
  it('isInside is about path components, not string prefixes', () => {
    expect(isInside('/home/me', '/home/me', 'lexical')).toBe(true);
    expect(isInside('/home/me/x', '/home/me', 'lexical')).toBe(true);
    expect(isInside('/home/me2', '/home/me', 'lexical')).toBe(false);
    expect(isInside('/anything', '/', 'lexical')).toBe(true);
  });

  it('ancestors go from / down to the parent', () => {
    expect(ancestors('/home/me')).toEqual(['/', '/home']);
    expect(ancestors('/var/home/me')).toEqual(['/', '/var', '/var/home']);
  });

  it('holdsHome: the home directory itself and any directory above it', () => {
    expect(holdsHome('/home/me', ['/home/me'])).toBe('/home/me');
    expect(holdsHome('/home', ['/home/me'])).toBe('/home/me');
    expect(holdsHome('/home/me/src', ['/home/me'])).toBeUndefined();
    expect(holdsHome('/home/me2', ['/home/me'])).toBeUndefined();
  });

  it('protectedHomes resolves links and keeps the outermost of nested homes', () => {
    const v = fakeFs({ '/': ['var', 'home'], '/var': ['home'], '/var/home': ['me'], '/var/home/me': ['sub'], '/var/home/me/sub': [] }, { '/home': '/var/home' });
    expect(protectedHomes(['/home/me', '/home/me/sub'], v)).toEqual(['/var/home/me']);
    expect(protectedHomes(['/home/me', '/elsewhere'], v).sort()).toEqual(['/elsewhere', '/var/home/me']);
    expect(protectedHomes(['relative'], v)).toEqual([]);
  });
});

describe('policy: around the home directory', () => {
  const policy = buildPolicy({ homes: ['/home/me'], home: '/home/me', dir: '/home/me/src/proj' }, view);
  const around = policy.grants.filter((g) => g.why.startsWith('around the home directory'));

  it('grants reading every entry of each directory above the home but the ones leading to it', () => {
    expect(around.map((g) => g.path).sort()).toEqual(['/dev', '/etc', '/home/other', '/tmp', '/usr', '/usr/bin', '/var'].sort());
    expect(around.every((g) => g.access === 'read')).toBe(true);
  });

  it('grants a link at its target, and names the link', () => {
    expect(around.find((g) => g.path === '/usr/bin' && g.given === '/bin')).toBeDefined();
  });

  it('skips links into the home directory or above it, and dangling ones', () => {
    const paths = around.map((g) => g.path);
    expect(paths).not.toContain('/home/me/.ssh');
    expect(paths).not.toContain('/home');
    expect(policy.skipped.map((s) => s.path)).toEqual(expect.arrayContaining(['/data', '/h']));
    expect(paths.some((p) => p.includes('nowhere'))).toBe(false);
  });

  it('grants listing (only) from /, so names everywhere can be listed', () => {
    expect(policy.grants.filter((g) => g.access === 'list')).toEqual([expect.objectContaining({ path: '/', isDirectory: true })]);
  });

  it('never grants the home directory itself or anything above it', () => {
    for (const g of policy.grants) {
      if (g.access === 'list') continue;
      expect(isInside('/home/me', g.path, 'lexical')).toBe(false);
    }
  });

  it('a directory that cannot be listed grants nothing in it, and says so', () => {
    const closed = fakeFs({ ...TREE, '/home': undefined as unknown as string[] }, LINKS, FILES);
    const p = buildPolicy({ homes: ['/home/me'], home: '/home/me', dir: '/tmp' }, closed);
    expect(p.grants.some((g) => g.path.startsWith('/home/'))).toBe(false);
    expect(p.skipped).toContainEqual({ path: '/home', why: 'cannot be listed, so nothing in it is readable' });
  });

  it('with the home directory behind a link (/home -> /var/home), goes around the real path', () => {
    const v = fakeFs(
      { '/': ['home', 'var', 'etc'], '/etc': [], '/var': ['home', 'lib'], '/var/lib': [], '/var/home': ['me', 'you'], '/var/home/me': [], '/var/home/you': [] },
      { '/home': '/var/home' },
    );
    const p = buildPolicy({ homes: ['/home/me'], home: '/home/me', dir: '/etc' }, v);
    expect(p.homes).toEqual(['/var/home/me']);
    const read = grantsOf(p.grants, 'read').sort();
    expect(read).toEqual(['/etc', '/var/home/you', '/var/lib']);
  });

  it('two homes ($HOME elsewhere): neither is granted', () => {
    const p = buildPolicy({ homes: ['/home/me', '/home/other'], home: '/home/other', dir: '/tmp' }, view);
    const read = grantsOf(p.grants, 'read');
    expect(read).not.toContain('/home/other');
    expect(read).not.toContain('/home/me');
  });
});

describe('policy: readable and writable paths', () => {
  const base = { homes: ['/home/me'], home: '/home/me', dir: '/home/me/src/proj' };

  it('defaults in the home directory that exist are granted, missing ones skipped', () => {
    const p = buildPolicy(base, view);
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me/.gitconfig', access: 'read', isDirectory: false }));
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me/.local/bin', access: 'read', isDirectory: true }));
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me/.cache', access: 'write' }));
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me/.cargo', access: 'write' }));
    expect(p.skipped).toContainEqual({ path: '/home/me/.nvm', why: 'does not exist' });
    expect(p.skipped).toContainEqual({ path: '/home/me/.npm', why: 'does not exist' });
    expect(grantsOf(p.grants)).not.toContain('/home/me/.ssh');
    expect(grantsOf(p.grants)).not.toContain('/home/me/notes.txt');
  });

  it('temporary directories and harmless devices are writable; devices as files', () => {
    const p = buildPolicy({ ...base, tmpdir: '/var/tmp' }, view);
    const write = p.grants.filter((g) => g.access === 'write');
    expect(write.map((g) => g.path)).toEqual(expect.arrayContaining(['/tmp', '/var/tmp', '/dev/null', '/dev/zero', '/dev/tty', '/dev/pts']));
    expect(write.find((g) => g.path === '/dev/null')?.isDirectory).toBe(false);
    expect(write.find((g) => g.path === '/dev/pts')?.isDirectory).toBe(true);
    expect(write.filter((g) => g.why === '$TMPDIR').map((g) => g.path)).toEqual(['/var/tmp']);
  });

  it('the directory comes last, writable, with unix sockets', () => {
    const p = buildPolicy(base, view);
    expect(p.grants[p.grants.length - 1]).toEqual({ path: '/home/me/src/proj', access: 'write', isDirectory: true, sockets: true, why: 'the directory the command works in' });
  });

  it('$PATH entries in the home directory are readable; others and relative ones add nothing', () => {
    const p = buildPolicy({ ...base, pathVar: '/home/me/.cargo/bin::relative:/usr/bin:/home/me/bin' }, view);
    const onPath = p.grants.filter((g) => g.why === 'on $PATH').map((g) => g.path);
    expect(onPath).toEqual(['/home/me/.cargo/bin', '/home/me/bin']);
  });

  it('a $PATH entry named twice (a profile run twice) is granted, and shown, once', () => {
    const p = buildPolicy({ ...base, pathVar: '/home/me/.cargo/bin:/home/me/.cargo/bin/:/usr/bin:/home/me/.cargo/bin' }, view);
    const onPath = p.grants.filter((g) => g.why === 'on $PATH').map((g) => g.path);
    expect(onPath).toEqual(['/home/me/.cargo/bin']);
  });

  it('a $PATH entry that is the home directory is refused with a warning', () => {
    const p = buildPolicy({ ...base, pathVar: '/home/me:/usr/bin' }, view);
    expect(grantsOf(p.grants)).not.toContain('/home/me');
    expect(p.warnings).toEqual([expect.stringMatching(/not granting \/home\/me \(on \$PATH\).*holds the home directory/)]);
  });

  it('a default path that is a link to the home directory is refused with a warning', () => {
    const v = fakeFs({ ...TREE, '/home/me': [...TREE['/home/me'], '.npm'] }, { ...LINKS, '/home/me/.npm': '/home/me' }, FILES);
    const p = buildPolicy(base, v);
    expect(grantsOf(p.grants)).not.toContain('/home/me');
    expect(p.warnings).toContainEqual(expect.stringMatching(/not granting \/home\/me\/\.npm .* leads to \/home\/me/));
  });

  it('-r and -w grant what they name, at its real path', () => {
    const p = buildPolicy({ ...base, readable: ['/home/me/notes.txt'], writable: ['/data'] }, view);
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me/notes.txt', access: 'read', isDirectory: false, why: 'given with -r' }));
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me/.ssh', access: 'write', given: '/data', why: 'given with -w', sockets: true }));
  });

  it('-w naming the home directory is honoured, but said loudly; a missing one is said too', () => {
    const p = buildPolicy({ ...base, writable: ['/home/me', '/home/me/missing'] }, view);
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me', access: 'write' }));
    expect(p.warnings).toContainEqual('-w /home/me gives the command the home directory /home/me, secrets included');
    expect(p.warnings).toContainEqual('-w /home/me/missing: no such file or directory, so it is not granted');
  });

  it('steps can add writable paths (the broker’s socket directory)', () => {
    const p = buildPolicy({ ...base, extraWritable: [{ path: '/tmp', why: 'the broker', sockets: true }] }, view);
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/tmp', why: 'the broker', sockets: true }));
  });
});

describe('policy: programs on $PATH and the packages they belong to', () => {
  // The ways people install the agents: an npm prefix in the home (its bin links into
  // lib/node_modules/PKG), Claude Code's installer (~/.local/bin/claude -> one file per version),
  // nvm, a pipx venv, an npm prefix under the private /tmp; and a link to a secret on $PATH.
  const dirs: Record<string, string[]> = {
    '/': ['home', 'tmp', 'usr'],
    '/usr': ['bin'],
    '/usr/bin': ['node'],
    '/home': ['me'],
    '/home/me': ['.npm-global', '.local', '.ssh', 'notes.txt'],
    '/home/me/.ssh': ['id_ed25519'],
    '/home/me/.npm-global': ['bin', 'lib'],
    '/home/me/.npm-global/bin': ['codex', 'notes'],
    '/home/me/.npm-global/lib': ['node_modules'],
    '/home/me/.npm-global/lib/node_modules': ['@openai', 'other'],
    '/home/me/.npm-global/lib/node_modules/@openai': ['codex'],
    '/home/me/.npm-global/lib/node_modules/@openai/codex': ['package.json', 'bin', 'node_modules'],
    '/home/me/.npm-global/lib/node_modules/@openai/codex/bin': ['codex.js'],
    '/home/me/.npm-global/lib/node_modules/@openai/codex/node_modules': [],
    '/home/me/.npm-global/lib/node_modules/other': ['package.json'],
    '/home/me/.local': ['bin', 'share'],
    '/home/me/.local/bin': ['claude', 'black', 'key'],
    '/home/me/.local/share': ['claude', 'pipx'],
    '/home/me/.local/share/claude': ['versions'],
    '/home/me/.local/share/claude/versions': ['2.1.0', '2.0.0'],
    '/home/me/.local/share/pipx': ['venvs'],
    '/home/me/.local/share/pipx/venvs': ['black'],
    '/home/me/.local/share/pipx/venvs/black': ['pyvenv.cfg', 'bin'],
    '/home/me/.local/share/pipx/venvs/black/bin': ['black', 'python'],
    '/tmp': ['prefix'],
    '/tmp/prefix': ['bin', 'lib'],
    '/tmp/prefix/bin': ['opencode'],
    '/tmp/prefix/lib': ['node_modules'],
    '/tmp/prefix/lib/node_modules': ['opencode-ai'],
    '/tmp/prefix/lib/node_modules/opencode-ai': ['package.json', 'bin'],
    '/tmp/prefix/lib/node_modules/opencode-ai/bin': ['opencode.exe'],
  };
  const files = [
    '/usr/bin/node',
    '/home/me/notes.txt',
    '/home/me/.ssh/id_ed25519',
    '/home/me/.npm-global/lib/node_modules/@openai/codex/package.json',
    '/home/me/.npm-global/lib/node_modules/@openai/codex/bin/codex.js',
    '/home/me/.npm-global/lib/node_modules/other/package.json',
    '/home/me/.local/share/claude/versions/2.1.0',
    '/home/me/.local/share/claude/versions/2.0.0',
    '/home/me/.local/share/pipx/venvs/black/pyvenv.cfg',
    '/home/me/.local/share/pipx/venvs/black/bin/black',
    '/home/me/.local/share/pipx/venvs/black/bin/python',
    '/tmp/prefix/lib/node_modules/opencode-ai/package.json',
    '/tmp/prefix/lib/node_modules/opencode-ai/bin/opencode.exe',
  ];
  for (const f of files) dirs[f] = [];
  const links = {
    '/home/me/.npm-global/bin/codex': '/home/me/.npm-global/lib/node_modules/@openai/codex/bin/codex.js',
    '/home/me/.npm-global/bin/notes': '/home/me/notes.txt',
    '/home/me/.local/bin/claude': '/home/me/.local/share/claude/versions/2.1.0',
    '/home/me/.local/bin/black': '/home/me/.local/share/pipx/venvs/black/bin/black',
    '/home/me/.local/bin/key': '/home/me/.ssh/id_ed25519',
    '/tmp/prefix/bin/opencode': '/tmp/prefix/lib/node_modules/opencode-ai/bin/opencode.exe',
  };
  const executables = files.filter((f) => /codex\.js|versions\/|bin\/(black|python)|opencode\.exe|\/node$/.test(f));
  const v = fakeFs(dirs, links, files, executables);
  const p = buildPolicy({ homes: ['/home/me'], home: '/home/me', dir: '/var/proj', pathVar: '/home/me/.npm-global/bin:/tmp/prefix/bin:/usr/bin' }, v);
  const packages = p.grants.filter((g) => g.why.startsWith('the package of')).map((g) => g.path);

  it('grants the package each linked program belongs to, and nothing else of the home', () => {
    expect(packages.sort()).toEqual(
      [
        '/home/me/.npm-global/lib/node_modules/@openai/codex',
        '/home/me/.local/share/claude/versions/2.1.0',
        '/home/me/.local/share/pipx/venvs/black',
        '/tmp/prefix/lib/node_modules/opencode-ai',
      ].sort(),
    );
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/home/me/.local/share/claude/versions/2.1.0', access: 'read', isDirectory: false }));
    expect(canRead('/home/me/.npm-global/lib/node_modules/@openai/codex/node_modules/x/codex', p)).toBe(true);
    // Another package of the same prefix, the other version, the notes: not granted.
    expect(canRead('/home/me/.npm-global/lib/node_modules/other/package.json', p)).toBe(false);
    expect(canRead('/home/me/.local/share/claude/versions/2.0.0', p)).toBe(false);
  });

  it('a link on $PATH to a file that cannot be run (a secret) grants nothing', () => {
    expect(canRead('/home/me/.ssh/id_ed25519', p)).toBe(false);
    expect(canRead('/home/me/notes.txt', p)).toBe(false);
  });

  it('a $PATH entry under the private /tmp is granted with its packages, so it still exists inside', () => {
    expect(p.grants).toContainEqual(expect.objectContaining({ path: '/tmp/prefix/bin', access: 'read', why: 'on $PATH' }));
  });

  it('packageOf: the nearest directory with package.json or pyvenv.cfg below the root, else the file', () => {
    expect(packageOf('/home/me/.npm-global/lib/node_modules/@openai/codex/bin/codex.js', '/home/me', v)).toBe('/home/me/.npm-global/lib/node_modules/@openai/codex');
    expect(packageOf('/home/me/.local/share/claude/versions/2.1.0', '/home/me', v)).toBe('/home/me/.local/share/claude/versions/2.1.0');
  });

  it('~/.claude.json is not among the defaults (only the claude preset grants it)', () => {
    expect(HOME_READABLE.map((r) => r.rel)).not.toContain('.claude.json');
    expect(grantsOf(buildPolicy({ homes: ['/home/me'], home: '/home/me', dir: '/tmp' }, view).grants)).not.toContain('/home/me/.claude.json');
  });
});

describe('policy: ensureHomeCaches', () => {
  it('makes the default caches that are missing, mode 0700, and leaves existing ones alone', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-caches-'));
    try {
      fs.mkdirSync(path.join(home, '.cache'), { mode: 0o755 });
      const made = ensureHomeCaches(home);
      expect(made.sort()).toEqual(HOME_WRITABLE.map((w) => path.join(home, w.rel)).filter((p) => !p.endsWith('.cache')).sort());
      for (const m of made) expect(fs.statSync(m).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.join(home, '.cache')).mode & 0o777).toBe(0o755);
      expect(ensureHomeCaches(path.join(home, 'missing'))).toEqual([]);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('policy: canRead', () => {
  const p = buildPolicy({ homes: ['/home/me'], home: '/home/me', dir: '/home/me/src/proj', readable: [path.normalize('/home/me/notes.txt')] }, view);
  it('outside the home directory everything; inside only what is granted (listing is not reading)', () => {
    expect(canRead('/usr/bin/python3', p)).toBe(true);
    expect(canRead('/home/me/.local/bin/tool', p)).toBe(true);
    expect(canRead('/home/me/notes.txt', p)).toBe(true);
    expect(canRead('/home/me/src/proj/run.sh', p)).toBe(true);
    expect(canRead('/home/me/bin/tool', p)).toBe(false);
    expect(canRead('/home/me/.ssh/id_ed25519', p)).toBe(false);
  });
});
