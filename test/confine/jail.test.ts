import { chooseJail, defaultJail, jailsFor } from '../../src/confine/jail';
import { parseMounts } from '../../src/confine/mounts';

describe('chooseJail', () => {
  it('defaults to landlock on Linux and seatbelt on macOS', () => {
    expect(defaultJail('linux')).toBe('landlock');
    expect(defaultJail('darwin')).toBe('seatbelt');
    expect(chooseJail(undefined, [], 'linux')).toBe('landlock');
    expect(jailsFor('linux')).toEqual(['landlock', 'bwrap', 'none']);
    expect(jailsFor('darwin')).toEqual(['seatbelt', 'none']);
  });

  it('refuses a jail the platform lacks, saying which it has', () => {
    expect(() => chooseJail('seatbelt', [], 'linux')).toThrow("--jail: unknown jail 'seatbelt' on Linux (seatbelt is macOS only): use one of landlock, bwrap, none");
    expect(() => chooseJail('bwrap', [], 'darwin')).toThrow(/bwrap is Linux only\): use one of seatbelt, none/);
    expect(() => chooseJail('docker', [], 'linux')).toThrow(/unknown jail 'docker' on Linux: use one of/);
  });

  it('takes --mount only with bwrap', () => {
    const mounts = parseMounts(['tmpfs:/x']);
    expect(chooseJail('bwrap', mounts, 'linux')).toBe('bwrap');
    expect(() => chooseJail(undefined, mounts, 'linux')).toThrow('--mount needs --jail bwrap: the landlock jail cannot mount anything (given: tmpfs:/x)');
    expect(() => chooseJail('none', mounts, 'linux')).toThrow(/the none jail cannot mount/);
  });
});

describe('jailSteps', () => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { STEPS } = require('../../src/confine/run') as typeof import('../../src/confine/run');
  const { jailSteps } = require('../../src/confine/jail') as typeof import('../../src/confine/jail');
  const names = (flags: Record<string, unknown>) =>
    jailSteps({ flags } as unknown as import('../../src/confine/run').ConfineOptions, STEPS, 'linux').map((s) => s.name);

  it("keeps Landlock's steps as they are, adding the preset's", () => {
    const n = names({});
    expect(n.filter((x) => !x.startsWith('preset'))).toEqual(STEPS.map((s) => s.name));
    expect(n.indexOf('preset')).toBe(n.indexOf('environment') + 1);
    expect(n.indexOf('preset-paths')).toBe(n.indexOf('policy') - 1);
  });

  it('bwrap: checks bwrap and the mounts first, needs no Landlock, and runs last after the policy', () => {
    const n = names({ jail: 'bwrap', mount: ['tmpfs:/x'] });
    expect(n[0]).toBe('bwrap-check');
    expect(n).not.toContain('landlock-abi');
    expect(n).not.toContain('ruleset');
    expect(n.indexOf('bwrap')).toBeGreaterThan(n.indexOf('policy'));
    expect(n.indexOf('fork')).toBeGreaterThan(n.indexOf('bwrap-check'));
  });

  it('none: no Landlock, no policy', () => {
    const n = names({ jail: 'none' });
    expect(n).not.toContain('landlock-abi');
    expect(n).not.toContain('policy');
    expect(n).toContain('no-jail');
  });

  it('seatbelt (macOS): no Landlock; sandbox-exec runs the policy, before the Linux hardening', () => {
    const n = jailSteps({ flags: {} } as unknown as import('../../src/confine/run').ConfineOptions, STEPS, 'darwin').map((s) => s.name);
    expect(n).not.toContain('landlock-abi');
    expect(n).not.toContain('ruleset');
    expect(n.indexOf('seatbelt')).toBe(n.indexOf('policy') + 1);
    expect(n.indexOf('hardening')).toBeGreaterThan(n.indexOf('seatbelt'));
  });

  it('refuses bad choices before any step runs', () => {
    expect(() => names({ jail: 'bwrap', mount: 'ro' })).toThrow(/too few parts/);
    expect(() => names({ preset: 'nope' })).toThrow(/unknown preset 'nope'/);
    expect(() => names({ jail: ['bwrap', 'none'] })).toThrow('--jail was given 2 times; give it once');
  });
});

describe('presetJail: the jail an agent runs in so that its own sandbox nests', () => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { presetJail } = require('../../src/confine/jail') as typeof import('../../src/confine/jail');
  const yes = () => true;
  const no = () => false;

  it('runs codex in the bwrap jail when no --jail is given, and says why once', () => {
    const r = presetJail({}, 'codex', 'linux', yes);
    expect(r.jail).toBe('bwrap');
    expect(r.note).toMatch(/^the bwrap jail for codex: Codex's own sandbox \(bubblewrap\) cannot run inside Landlock, which forbids mounting .*\(--jail landlock to not\)$/);
    expect(presetJail({ preset: 'codex' }, 'sh', 'linux', yes).jail).toBe('bwrap');
  });

  it('leaves the other agents, --preset none, macOS and a named jail alone', () => {
    expect(presetJail({}, 'claude', 'linux', yes)).toEqual({});
    expect(presetJail({}, 'opencode', 'linux', yes)).toEqual({});
    expect(presetJail({ preset: 'none' }, 'codex', 'linux', yes)).toEqual({});
    expect(presetJail({}, 'codex', 'darwin', yes)).toEqual({});
    expect(presetJail({ jail: 'bwrap' }, 'codex', 'linux', yes)).toEqual({});
  });

  it('says once, with how to run, where Codex’s sandbox cannot start', () => {
    const named = presetJail({ jail: 'landlock' }, 'codex', 'linux', yes);
    expect(named.jail).toBeUndefined();
    expect(named.warning).toMatch(/in the landlock jail its commands will fail \(use --jail bwrap, or run codex with --sandbox danger-full-access to leave only confine's jail\)/);
    const missing = presetJail({}, 'codex', 'linux', no);
    expect(missing.jail).toBeUndefined();
    expect(missing.warning).toMatch(/bwrap is not installed .*install bubblewrap, or run codex with --sandbox danger-full-access/);
  });
});
