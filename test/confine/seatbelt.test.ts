// The Seatbelt jail's pure parts (profile, argument list, path resolution), tested on every
// platform; and its runner, on Linux with a stand-in sandbox-exec that only runs the command
// (what Seatbelt itself enforces can only be seen on a Mac: docs/macos.md).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import {
  PathView,
  SANDBOX_EXEC,
  SeatbeltPolicy,
  runSeatbelt,
  resolveSeatbeltPath,
  resolveSeatbeltPolicy,
  seatbeltArgv,
  seatbeltPolicyFromGrants,
  seatbeltProfile,
} from '../../src/confine/seatbelt';
import { ArbError } from '../../src/errors';
import type { Waitable } from '../../src/confine/wait';

// Names that would break out of a string, a list or a line in a profile if they were pasted
// into its text.
const HOME = '/Users/j "quote" (paren) back\\slash';
const ODD = [
  `${HOME}/src/my proj.1`,
  `${HOME}/.config/with"quote`,
  `${HOME}/paren(s)/x`,
  `${HOME}/back\\slash\\`,
  `${HOME}/new\nline`,
  `${HOME}/ünïcødé/日本`,
  `${HOME}/semi;colon #"regex"`,
];

function policy(over: Partial<SeatbeltPolicy> = {}): SeatbeltPolicy {
  return {
    home: HOME,
    directory: ODD[0],
    readable: [`${HOME}/.gitconfig`, ODD[1], ODD[2], ODD[4], '/opt/homebrew/bin'],
    writable: [`${HOME}/.cache`, ODD[3], ODD[5], ODD[6], '/private/var/folders/xy/abc/T'],
    command: ['/usr/bin/env', '--', '-weird', 'arg (with) "quotes"'],
    files: [`${HOME}/.gitconfig`],
    ...over,
  };
}

/** The rules: the profile without comments and blank lines. */
function rules(profile: string): string[] {
  return profile.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith(';'));
}

/** -D NAME=value pairs of an argument list, in order. */
function params(argv: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--') break;
    if (argv[i] === '-D') {
      const eq = argv[i + 1].indexOf('=');
      out.push([argv[i + 1].slice(0, eq), argv[i + 1].slice(eq + 1)]);
      i++;
    }
  }
  return out;
}

describe('seatbeltProfile / seatbeltArgv', () => {
  const p = policy();
  const argv = seatbeltArgv(p);
  const profile = argv[2];
  const named = new Map(params(argv));

  it('runs /usr/bin/sandbox-exec by its absolute path, with the profile inline', () => {
    expect(argv[0]).toBe('/usr/bin/sandbox-exec');
    expect(SANDBOX_EXEC).toBe('/usr/bin/sandbox-exec');
    expect(argv[1]).toBe('-p');
    expect(profile.startsWith('(version 1)\n')).toBe(true);
  });

  it('ends the options with -- so the command and its arguments are taken as they are', () => {
    const dash = argv.indexOf('--');
    expect(argv.slice(dash + 1)).toEqual(p.command);
    // Every option before it is -p PROFILE or -D NAME=value.
    const opts = argv.slice(1, dash);
    for (let i = 0; i < opts.length; i += 2) expect(['-p', '-D']).toContain(opts[i]);
  });

  it('never pastes a path into the profile: each is a -D parameter', () => {
    for (const odd of [HOME, ...ODD, `${HOME}/.gitconfig`, `${HOME}/.cache`]) {
      expect(profile).not.toContain(odd);
      expect([...named.values()]).toContain(odd);
    }
    for (const fragment of ['quote', 'paren', 'slash', 'new\nline', 'ünïcødé', '日本', 'semi;colon', 'my proj', '.gitconfig', 'Users']) {
      expect(profile).not.toContain(fragment);
    }
    // Outside comments, the only '/' are in the two fixed device patterns.
    const withSlash = rules(profile).filter((l) => l.includes('/'));
    expect(withSlash).toEqual(['(allow file-write* (regex #"^/dev/ttys[0-9]+$"))', '(deny file-read* file-write* (regex #"^/dev/r?disk[0-9]"))']);
    // The text is ASCII and its parentheses balance (comments aside).
    expect(/^[\x09\x0a\x20-\x7e]*$/.test(profile)).toBe(true);
    const text = rules(profile).join('\n');
    let depth = 0;
    for (const c of text) {
      depth += c === '(' ? 1 : c === ')' ? -1 : 0;
      expect(depth).toBeGreaterThanOrEqual(0);
    }
    expect(depth).toBe(0);
  });

  it('names each parameter it uses, and uses each it names', () => {
    const used = new Set([...profile.matchAll(/\(param "([A-Z_0-9]+)"\)/g)].map((m) => m[1]));
    expect(used).toEqual(new Set(named.keys()));
    expect(named.size).toBe(params(argv).length); // no name given twice
  });

  it('allows everything, then denies writing, then reading the home directory, and allows the directory last', () => {
    const r = rules(profile);
    const at = (line: string) => {
      const i = r.indexOf(line);
      expect(i).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(r[1]).toBe('(allow default)');
    const denyWrite = at('(deny file-write*)');
    const denyRead = at('(deny file-read*');
    const allowRead = at('(allow file-read*');
    expect(denyWrite).toBeLessThan(r.indexOf('(allow file-write*'));
    expect(denyRead).toBeLessThan(allowRead);
    expect(r[denyRead + 1]).toBe('  (subpath (param "HOME_0"))');
    expect(named.get('HOME_0')).toBe(HOME);
    // The directory: the very last rule, reading and writing, as a subpath.
    expect(r[r.length - 1]).toBe('(allow file-read* file-write* (subpath (param "DIRECTORY")))');
    expect(named.get('DIRECTORY')).toBe(ODD[0]);
    expect(r.filter((l) => l.includes('"DIRECTORY"'))).toHaveLength(1);
  });

  it('keeps stat (not contents) in the home directory, and denies hard links and the ways out', () => {
    const r = rules(profile);
    expect(r[r.indexOf('(allow file-read-metadata') + 1]).toBe('  (subpath (param "HOME_0"))');
    for (const line of ['(deny file-link)', '(deny lsopen)', '(deny appleevent-send)', '(deny job-creation)', '(deny signal)', '(deny process-info*)']) {
      expect(r).toContain(line);
    }
    expect(r.indexOf('(allow signal (target same-sandbox))')).toBe(r.indexOf('(deny signal)') + 1);
    expect(r.indexOf('(allow process-info* (target same-sandbox))')).toBe(r.indexOf('(deny process-info*)') + 1);
  });

  /** The parameter values a rule block (from its head to its closing line) names. */
  function block(head: string, occurrence = 0): { match: string; value: string }[] {
    const r = rules(profile);
    let start = -1;
    for (let k = 0; k <= occurrence; k++) start = r.indexOf(head, start + 1);
    expect(start).toBeGreaterThanOrEqual(0);
    const out: { match: string; value: string }[] = [];
    for (let i = start + 1; r[i] !== ')'; i++) {
      const m = /^ {2}\((literal|subpath) \(param "([A-Z_0-9]+)"\)\)$/.exec(r[i]);
      expect(m).not.toBeNull();
      out.push({ match: m![1], value: named.get(m![2])! });
    }
    return out;
  }

  it('makes writable the policy paths, the temporary directories and ~/Library/Caches; readable, the keychains', () => {
    const writable = block('(allow file-write*').map((w) => w.value);
    expect(writable).toEqual(
      expect.arrayContaining(['/private/tmp', '/private/var/tmp', '/private/var/folders', `${HOME}/Library/Caches`, `${HOME}/.cache`, ODD[3], ODD[5], ODD[6]]),
    );
    // $TMPDIR lies in /private/var/folders: one rule covers it.
    expect(writable).not.toContain('/private/var/folders/xy/abc/T');
    // What may be written may be read.
    expect(block('(allow file-read*', 1).map((w) => w.value)).toEqual(writable);
    const readable = block('(allow file-read*', 0);
    expect(readable.map((x) => x.value)).toEqual(expect.arrayContaining([`${HOME}/Library/Keychains`, `${HOME}/.gitconfig`, ODD[1], ODD[2], ODD[4]]));
    // Reading outside the home directory is never denied, so needs no rule.
    expect(readable.map((x) => x.value)).not.toContain('/opt/homebrew/bin');
  });

  it('matches a file with literal, anything else (a directory, or what does not exist yet) with subpath', () => {
    const readable = block('(allow file-read*', 0);
    expect(readable.find((x) => x.value === `${HOME}/.gitconfig`)?.match).toBe('literal');
    expect(readable.find((x) => x.value === ODD[1])?.match).toBe('subpath');
    const devices = block('(allow file-write*', 1);
    expect(devices.filter((d) => d.match === 'literal').map((d) => d.value)).toEqual(
      expect.arrayContaining(['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/tty', '/dev/ptmx']),
    );
    expect(devices.find((d) => d.value === '/dev/fd')?.match).toBe('subpath');
  });

  it('denies every spelling of the home directory given', () => {
    const two = seatbeltProfile(policy({ homes: ['/private/Users/link', HOME] }));
    expect(two.params.filter(([n]) => n.startsWith('HOME_'))).toEqual([
      ['HOME_0', HOME],
      ['HOME_1', '/private/Users/link'],
    ]);
    expect(two.profile).toContain('(deny file-read*\n  (subpath (param "HOME_0"))\n  (subpath (param "HOME_1"))\n)');
  });

  it('keeps a -r path that holds the home directory (as Landlock would grant beneath it)', () => {
    const { profile: text, params: ps } = seatbeltProfile(policy({ readable: ['/Users'] }));
    const name = ps.find(([, v]) => v === '/Users')?.[0];
    expect(name).toBeDefined();
    expect(text.indexOf(`(param "${name}")`)).toBeGreaterThan(text.indexOf('(deny file-read*'));
  });

  it('refuses a relative path, a NUL byte, or / as the home directory, rather than build a profile', () => {
    expect(() => seatbeltArgv(policy({ writable: ['relative/path'] }))).toThrow(/absolute path/);
    expect(() => seatbeltArgv(policy({ readable: [`${HOME}/a\0b`] }))).toThrow(/NUL/);
    expect(() => seatbeltArgv(policy({ home: '/' }))).toThrow(/cannot be '\/'/);
    expect(() => seatbeltArgv(policy({ command: [] }))).toThrow(/no command/);
    expect(() => seatbeltArgv(policy({ command: ['claude'] }))).toThrow(ArbError);
  });
});

describe('seatbeltPolicyFromGrants', () => {
  it("takes policy.ts's grants: write -> writable, read -> readable, files as files, list ignored", () => {
    const p = seatbeltPolicyFromGrants({
      homes: ['/Users/me', '/Users/me-too'],
      directory: '/Users/me/src/p.1',
      grants: [
        { path: '/', access: 'list', isDirectory: true },
        { path: '/Applications', access: 'read', isDirectory: true },
        { path: '/Users/me/.gitconfig', access: 'read', isDirectory: false },
        { path: '/Users/me/.local/bin', access: 'read', isDirectory: true },
        { path: '/private/tmp', access: 'write', isDirectory: true },
        { path: '/dev/null', access: 'write', isDirectory: false },
        { path: '/Users/me/src/p.1', access: 'write', isDirectory: true },
      ],
      command: ['/bin/sh'],
    });
    expect(p).toEqual({
      home: '/Users/me',
      homes: ['/Users/me-too'],
      directory: '/Users/me/src/p.1',
      readable: ['/Applications', '/Users/me/.gitconfig', '/Users/me/.local/bin'],
      writable: ['/private/tmp', '/dev/null'],
      command: ['/bin/sh'],
      files: ['/Users/me/.gitconfig', '/dev/null'],
    });
    // And the profile keeps only what matters on a Mac: no rule for /Applications.
    const ps = seatbeltProfile(p).params.map(([, v]) => v);
    expect(ps).not.toContain('/Applications');
    expect(ps).toContain('/Users/me/.gitconfig');
  });
});

// --- resolution ----------------------------------------------------------------------------------

/** A file system of a few paths and links, as a Mac has them (/tmp and /var are links). */
function fakeView(links: Record<string, string>, existing: string[], files: string[] = []): PathView {
  const exists = new Set(existing);
  const realpath = (p: string, depth = 0): string | undefined => {
    if (depth > 40) return undefined;
    let cur = '/';
    for (const part of p.split('/').filter(Boolean)) {
      const next = path.join(cur, part);
      if (links[next] !== undefined) {
        const target = path.resolve(cur, links[next]);
        const real = realpath(target, depth + 1);
        if (real === undefined) return undefined;
        cur = real;
      } else if (exists.has(next)) {
        cur = next;
      } else {
        return undefined;
      }
    }
    return cur;
  };
  return {
    realpath: (p) => realpath(p),
    isDirectory: (p) => {
      const r = realpath(p);
      return r !== undefined && !files.includes(r);
    },
  };
}

const MAC = fakeView(
  { '/tmp': 'private/tmp', '/var': 'private/var', '/Users/me/.nvm': '/opt/nvm', '/Users/me/dotfiles-link': 'dotfiles', '/Users/me/work': '/Volumes/Data/me work' },
  ['/private', '/private/tmp', '/private/var', '/private/var/folders', '/private/var/folders/xy', '/private/var/folders/xy/T', '/Users', '/Users/me', '/Users/me/.gitconfig', '/Users/me/dotfiles', '/opt', '/opt/nvm', '/Volumes', '/Volumes/Data', '/Volumes/Data/me work', '/Volumes/Data/me work/proj.1'],
  ['/Users/me/.gitconfig'],
);

describe('resolveSeatbeltPath', () => {
  it('resolves links as Seatbelt sees them: /tmp is /private/tmp, /var is /private/var', () => {
    expect(resolveSeatbeltPath('/tmp', MAC)).toBe('/private/tmp');
    expect(resolveSeatbeltPath('/var/folders/xy/T/', MAC)).toBe('/private/var/folders/xy/T');
    expect(resolveSeatbeltPath('/Users/me/.nvm', MAC)).toBe('/opt/nvm');
    expect(resolveSeatbeltPath('/Users/me/dotfiles-link', MAC)).toBe('/Users/me/dotfiles');
  });

  it('resolves what does not exist yet as far as it exists, keeping the rest', () => {
    expect(resolveSeatbeltPath('/tmp/not/yet', MAC)).toBe('/private/tmp/not/yet');
    expect(resolveSeatbeltPath('/Users/me/.cache', MAC)).toBe('/Users/me/.cache');
    expect(resolveSeatbeltPath('/Users/me/work/proj.2', MAC)).toBe('/Volumes/Data/me work/proj.2');
    expect(resolveSeatbeltPath('/nowhere/at/all', MAC)).toBe('/nowhere/at/all');
  });
});

describe('resolveSeatbeltPolicy', () => {
  const resolved = resolveSeatbeltPolicy(
    {
      home: '/Users/me',
      homes: ['/Users/me/work'],
      directory: '/Users/me/work/proj.1',
      readable: ['/Users/me/.gitconfig', '/Users/me/.nvm', '/Users/me/.config/git'],
      writable: ['/tmp', '/var/folders/xy/T', '/Users/me/.cache'],
      command: ['/bin/sh'],
    },
    MAC,
  );

  it('gives every path as resolved, and keeps both spellings of a home reached through a link', () => {
    expect(resolved.directory).toBe('/Volumes/Data/me work/proj.1');
    expect(resolved.writable).toEqual(['/private/tmp', '/private/var/folders/xy/T', '/Users/me/.cache']);
    expect(resolved.readable).toEqual(['/Users/me/.gitconfig', '/opt/nvm', '/Users/me/.config/git']);
    expect([resolved.home, ...(resolved.homes ?? [])]).toEqual(['/Users/me', '/Volumes/Data/me work', '/Users/me/work']);
  });

  it('marks files (literal) and leaves directories and missing paths to subpath', () => {
    expect(resolved.files).toEqual(['/Users/me/.gitconfig']);
    const argv = seatbeltArgv(resolved);
    const p = new Map(params(argv));
    const name = [...p].find(([, v]) => v === '/Users/me/.gitconfig')![0];
    expect(argv[2]).toContain(`(literal (param "${name}"))`);
  });
});

// --- the runner ------------------------------------------------------------------------------------

describe('runSeatbelt, the seatbelt jail\'s runner (with a stand-in sandbox-exec that only runs the command)', () => {
  let dir: string;
  let fakeExec: string;
  let argsFile: string;
  const base = (): Parameters<typeof runSeatbelt>[0] => ({
    home: path.join(dir, 'home'),
    directory: path.join(dir, 'work'),
    readable: [],
    writable: [],
    command: ['/bin/sh', '-c', 'exit 0'],
    env: { PATH: '/usr/bin:/bin', SEATBELT_ARGS: argsFile },
  });
  const deps = () => ({ inSandbox: () => false, sandboxExec: fakeExec, fromTerminal: () => false });
  // What waiting needs of confine's plan: no fork, no hooks.
  const waiting = (): Waitable => ({ program: 'arb confine', command: 'sh', verbose: false, rm: false, beforeStart: [], afterExit: [] });
  const confineSeatbelt = (run: Parameters<typeof runSeatbelt>[0], d: Parameters<typeof runSeatbelt>[2]) => runSeatbelt(run, waiting(), d);

  beforeAll(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-seatbelt-')));
    fs.mkdirSync(path.join(dir, 'home'));
    fs.mkdirSync(path.join(dir, 'work'));
    fs.symlinkSync('home', path.join(dir, 'home-link'));
    argsFile = path.join(dir, 'args');
    fakeExec = path.join(dir, 'sandbox-exec');
    // Records its arguments, skips its options up to --, and runs the command as itself.
    fs.writeFileSync(fakeExec, '#!/bin/sh\nprintf "%s\\0" "$@" > "$SEATBELT_ARGS"\nwhile [ "$#" -gt 0 ] && [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n', { mode: 0o755 });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exits as the command did', async () => {
    const r = await confineSeatbelt({ ...base(), command: ['/bin/sh', '-c', 'exit 7'] }, deps());
    expect(r).toBe(7);
  });

  it('exits with 128+N when a signal ends the command', async () => {
    const r = await confineSeatbelt({ ...base(), command: ['/bin/sh', '-c', 'kill -TERM $$'] }, deps());
    expect(r).toBe(128 + os.constants.signals.SIGTERM);
  });

  it('runs the command in the directory with CLAUDE_CODE_SANDBOXED=1', async () => {
    const out = path.join(dir, 'env-out');
    const r = await confineSeatbelt(
      { ...base(), command: ['/bin/sh', '-c', `printf '%s|%s' "$CLAUDE_CODE_SANDBOXED" "$PWD" > '${out}'`], env: { ...base().env, CLAUDE_CODE_SANDBOXED: '0' } },
      deps(),
    );
    expect(r).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toBe(`1|${path.join(dir, 'work')}`);
  });

  it('gives sandbox-exec the profile and the resolved paths as parameters, then -- and the command', async () => {
    await confineSeatbelt({ ...base(), home: path.join(dir, 'home-link'), command: ['/bin/echo', '--', '-n'] }, deps());
    const args = fs.readFileSync(argsFile, 'utf8').split('\0').slice(0, -1);
    expect(args[0]).toBe('-p');
    expect(args[1]).toMatch(/^\(version 1\)\n/);
    const p = new Map(params(['x', ...args]));
    // The home, as given through a link and as resolved, both denied.
    expect(new Set([p.get('HOME_0'), p.get('HOME_1')])).toEqual(new Set([path.join(dir, 'home'), path.join(dir, 'home-link')]));
    expect(p.get('DIRECTORY')).toBe(path.join(dir, 'work'));
    expect(args.slice(args.indexOf('--') + 1)).toEqual(['/bin/echo', '--', '-n']);
  });

  it('passes on a signal sent to confine, but not one the terminal sent the command too', async () => {
    const ready = path.join(dir, 'ready');
    const before = process.listenerCount('SIGTERM');
    const running = confineSeatbelt(
      {
        ...base(),
        command: ['/bin/sh', '-c', `trap 'exit 40' INT; trap 'exit 42' TERM; : > '${ready}'; while :; do sleep 0.05; done`],
      },
      { ...deps(), fromTerminal: (sig: NodeJS.Signals) => sig === 'SIGINT' },
    );
    for (let i = 0; i < 200 && !fs.existsSync(ready); i++) await new Promise((r) => setTimeout(r, 25));
    expect(fs.existsSync(ready)).toBe(true);
    process.emit('SIGINT', 'SIGINT'); // "from the terminal": the command got it already, not again
    await new Promise((r) => setTimeout(r, 200));
    process.emit('SIGTERM', 'SIGTERM');
    expect(await running).toBe(42);
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });

  it('refuses, running nothing, inside a Seatbelt sandbox already (sandbox-exec cannot nest)', async () => {
    const spawned = jest.fn(spawn);
    await expect(confineSeatbelt(base(), { ...deps(), inSandbox: () => true, spawn: spawned })).rejects.toThrow(
      /already runs inside a Seatbelt sandbox, and sandbox-exec cannot apply a second one/,
    );
    expect(spawned).not.toHaveBeenCalled();
  });

  it('refuses, running nothing, where sandbox-exec is missing', async () => {
    const spawned = jest.fn(spawn);
    const err = await confineSeatbelt(base(), { ...deps(), sandboxExec: path.join(dir, 'no-such-sandbox-exec'), spawn: spawned }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ArbError);
    expect((err as ArbError).code).toBe('ARB_UNSUPPORTED');
    expect((err as ArbError).message).toMatch(/no-such-sandbox-exec is missing or cannot be run/);
    expect(spawned).not.toHaveBeenCalled();
  });
});
