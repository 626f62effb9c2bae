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

describe('checkRequest: usage errors before anything is made', () => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { checkRequest } = require('../../src/confine/run') as typeof import('../../src/confine/run');
  const { confineRequest } = require('../../src/confine/request') as typeof import('../../src/confine/request');
  const check = (over: Partial<import('../../src/confine/request').ConfineRequest>, platform: NodeJS.Platform = 'linux') =>
    checkRequest(confineRequest({ command: 'true', ...over }), platform);

  it('chooses the platform default, or the jail named, with its mounts parsed', () => {
    expect(check({}).jail).toBe('landlock');
    expect(check({}, 'darwin').jail).toBe('seatbelt');
    expect(check({ jail: 'bwrap', mounts: ['tmpfs:/x'] })).toEqual({ jail: 'bwrap', mounts: parseMounts(['tmpfs:/x']), said: [] });
  });

  it('refuses bad choices', () => {
    expect(() => check({ jail: 'bwrap', mounts: ['ro'] })).toThrow(/too few parts/);
    expect(() => check({ preset: 'nope' })).toThrow(/unknown preset 'nope'/);
    expect(() => check({ keepEnv: ['A=B'] })).toThrow();
    expect(() => check({ rm: true, dir: '/x' })).toThrow(/--rm removes the fork confine makes/);
  });

  it('--no-network: the landlock and bwrap jails enforce it; the others refuse', () => {
    expect(check({ noNetwork: true }).jail).toBe('landlock');
    expect(check({ noNetwork: true, jail: 'bwrap' }).jail).toBe('bwrap');
    expect(() => check({ noNetwork: true, jail: 'none' })).toThrow('--no-network needs the landlock or bwrap jail (given: --jail none)');
  });

  it('an option that takes one value, given twice, is refused where the command line is read', () => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { toRequest } = require('../../src/commands/confine') as typeof import('../../src/commands/confine');
    expect(() => toRequest({ jail: ['bwrap', 'none'] }, { program: 'arb confine', rest: ['true'] })).toThrow('--jail was given 2 times; give it once');
    expect(toRequest({ mount: 'tmpfs:/x', 'keep-env': ['A', 'B'], 'no-network': true }, { program: 'arb confine', rest: ['ls', '-l'] })).toMatchObject({
      command: 'ls',
      args: ['-l'],
      mounts: ['tmpfs:/x'],
      keepEnv: ['A', 'B'],
      noNetwork: true,
      wait: false,
    });
  });
});

describe("each jail's plan (explain: nothing forked or run)", () => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { describePlan, launchPlanOf, planConfine } = require('../../src/confine/run') as typeof import('../../src/confine/run');
  const { confineRequest } = require('../../src/confine/request') as typeof import('../../src/confine/request');
  const env = { HOME: '/root', PATH: '/usr/bin:/bin' };

  it('landlock: the policy, the namespaces and mount plan, and the ruleset', async () => {
    const plan = await planConfine(confineRequest({ command: 'true', dir: '/usr', env }), 'explain');
    expect(plan.jail).toBe('landlock');
    expect(plan.policy).toBeDefined();
    expect(plan.landlock?.rules.length).toBeGreaterThan(0);
    expect(plan.hardening?.mounts.ops.length).toBeGreaterThan(0);
    expect(plan.fork).toBeUndefined();
  });

  it("claude: the namespaces' plan waits (to copy ~/.claude.json back) rather than exec the launcher; nothing copied to explain", async () => {
    const plan = await planConfine(confineRequest({ command: 'true', dir: '/usr', env, preset: 'claude' }), 'explain');
    expect(plan.namespaces).toBeDefined();
    expect(plan.waitReasons).toEqual(['the claude preset copies /root/.claude.json back when it exits']);
    expect(plan.env.CLAUDE_CONFIG_DIR).toBe('/root/.claude');
    expect(describePlan(plan).pop()).toBe('running /usr/bin/true in /usr, waiting for it (the claude preset copies /root/.claude.json back when it exits)');
    expect([plan.beforeStart, plan.afterExit]).toEqual([[], []]);
    // PWD is the directory the command runs in; the caller's OLDPWD goes.
    const moved = await planConfine(confineRequest({ command: 'true', dir: '/usr', env: { ...env, PWD: '/root/x', OLDPWD: '/root/y' } }), 'explain');
    expect([moved.env.PWD, moved.env.OLDPWD]).toEqual(['/usr', undefined]);
  });

  it('codex: the bwrap jail without Landlock inside, said once', async () => {
    // Not -d /usr: the command could write the bwrap there (see below).
    const plan = await planConfine(confineRequest({ command: 'true', dir: '/srv', env, preset: 'codex' }), 'explain');
    expect(plan.jail).toBe('bwrap');
    expect(plan.landlock).toBeUndefined();
    expect(plan.withoutLandlock).toMatch(/^Codex's own sandbox/);
    expect(plan.warnings.filter((w) => /without Landlock inside/.test(w))).toHaveLength(1);
    expect(launchPlanOf(plan).landlock).toBeUndefined();
    // Any other command in the bwrap jail keeps Landlock inside.
    expect((await planConfine(confineRequest({ command: 'true', dir: '/srv', env, jail: 'bwrap' }), 'explain')).landlock).toBeDefined();
  });

  it('bwrap: the same policy, mount plan and ruleset, with the --mount destinations granted, and its runner', async () => {
    // Not -d /usr: the command could write the bwrap there (next test).
    const plan = await planConfine(confineRequest({ command: 'true', dir: '/srv', env, jail: 'bwrap', mounts: ['rw:/srv:/data'] }), 'explain');
    const landlock = await planConfine(confineRequest({ command: 'true', dir: '/srv', env }), 'explain');
    expect(plan.hardening?.mounts).toEqual(landlock.hardening?.mounts);
    expect(plan.landlock?.rules.slice(0, -1)).toEqual(landlock.landlock?.rules);
    expect(plan.landlock?.rules[plan.landlock.rules.length - 1].path).toBe('/data');
    expect(plan.namespaces).toBeUndefined(); // bubblewrap's, not the launcher's
    expect(plan.runner).toBeDefined();
  });

  it('bwrap: never one where the command may write (here -d /usr holds /usr/bin/bwrap)', async () => {
    await expect(planConfine(confineRequest({ command: 'true', dir: '/usr', env, jail: 'bwrap' }), 'explain')).rejects.toThrow(
      "cannot use the bwrap jail: the only bwrap found, '/usr/bin/bwrap', is where the confined command may write, and bwrap runs outside, as you",
    );
  });

  it('-w, -r or -d of ~/.ssh, ~/.gnupg, ~/.aws or $XDG_RUNTIME_DIR (or around one) warns, naming what it gives away', async () => {
    const plan = await planConfine(
      confineRequest({ command: 'true', dir: '/usr', env: { ...env, XDG_RUNTIME_DIR: '/run/user/4242' }, read: ['~/.ssh/id_ed25519.pub', '/root/.aws'], write: ['/run/user/4242/x', '/root/.gnupg'] }),
      'explain',
    );
    const said = plan.warnings.filter((w) => /only grant it if you trust the command/.test(w));
    expect(said).toEqual([
      expect.stringMatching(/^-w \/run\/user\/4242\/x: the command can read and change the sockets of your session/),
      expect.stringMatching(/^-w \/root\/.gnupg: the command can read and change your GnuPG keys/),
      expect.stringMatching(/^-r ~\/.ssh\/id_ed25519.pub: the command can read your SSH keys \(\/root\/.ssh\)/),
      expect.stringMatching(/^-r \/root\/.aws: the command can read your AWS credentials/),
    ]);
    const quiet = await planConfine(confineRequest({ command: 'true', dir: '/usr', env, read: ['/root/.sshd-notes'] }), 'explain');
    expect(quiet.warnings.filter((w) => /only grant it/.test(w))).toEqual([]);
  });

  it('none: no policy, no Landlock, and the warning', async () => {
    const plan = await planConfine(confineRequest({ command: 'true', dir: '/usr', env, jail: 'none' }), 'explain');
    expect(plan.policy).toBeUndefined();
    expect(plan.landlock).toBeUndefined();
    expect(plan.warnings[0]).toMatch(/WITHOUT ANY ISOLATION/);
    expect(plan.env.CLAUDE_CODE_SANDBOXED).toBeUndefined();
  });
});

describe('presetJail: the jail an agent runs in so that its own sandbox nests', () => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { presetJail } = require('../../src/confine/jail') as typeof import('../../src/confine/jail');
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { checkRequest } = require('../../src/confine/run') as typeof import('../../src/confine/run');
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { getPreset } = require('../../src/confine/presets') as typeof import('../../src/confine/presets');
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { confineRequest } = require('../../src/confine/request') as typeof import('../../src/confine/request');
  const yes = () => true;
  const no = () => false;
  const codex = getPreset('codex');

  it('runs codex in the bwrap jail when no --jail is given, and says why once', () => {
    const r = presetJail(undefined, [], codex, 'linux', yes);
    expect(r.jail).toBe('bwrap');
    expect(r.said).toMatch(/^using the bwrap jail for codex, without Landlock inside: Codex's own sandbox \(bubblewrap\) cannot run inside Landlock, which forbids mounting .*; the jail's namespaces and read-only mounts confine it, and its sandbox nests inside \(--jail landlock to not\)$/);
    expect(r.withoutLandlock).toMatch(/^Codex's own sandbox \(bubblewrap\) cannot run inside Landlock/);
    // Part of the request's check: by the command's name, or --preset codex for another command.
    const byName = checkRequest(confineRequest({ command: 'codex' }), 'linux', yes);
    expect(byName.jail).toBe('bwrap');
    expect(byName.said).toEqual([r.said]);
    expect(checkRequest(confineRequest({ command: 'sh', preset: 'codex' }), 'linux', yes).jail).toBe('bwrap');
    // --no-network works there too (loopback only).
    expect(checkRequest(confineRequest({ command: 'codex', noNetwork: true }), 'linux', yes).jail).toBe('bwrap');
  });

  it('leaves the other agents, --preset none, macOS and a named jail alone', () => {
    expect(presetJail(undefined, [], getPreset('claude'), 'linux', yes)).toEqual({});
    expect(presetJail(undefined, [], getPreset('opencode'), 'linux', yes)).toEqual({});
    expect(presetJail(undefined, [], codex, 'darwin', yes)).toEqual({});
    // --jail bwrap named: the same jail, without Landlock inside, said once.
    const named = presetJail('bwrap', [], codex, 'linux', yes);
    expect(named.jail).toBeUndefined();
    expect(named.said).toMatch(/^the bwrap jail for codex, without Landlock inside: /);
    expect(checkRequest(confineRequest({ command: 'codex', jail: 'bwrap' }), 'linux', yes)).toMatchObject({ jail: 'bwrap', said: [named.said], withoutLandlock: named.withoutLandlock });
    expect(checkRequest(confineRequest({ command: 'sh', jail: 'bwrap' }), 'linux', yes).withoutLandlock).toBeUndefined();
    expect(checkRequest(confineRequest({ command: 'codex', preset: 'none' }), 'linux', yes)).toMatchObject({ jail: 'landlock', said: [] });
    expect(checkRequest(confineRequest({ command: 'claude' }), 'linux', yes)).toMatchObject({ jail: 'landlock', said: [] });
    expect(checkRequest(confineRequest({ command: 'codex' }), 'darwin', yes)).toMatchObject({ jail: 'seatbelt', said: [] });
  });

  it('says once, with how to run, where Codex’s sandbox cannot start', () => {
    const named = presetJail('landlock', [], codex, 'linux', yes);
    expect(named.jail).toBeUndefined();
    expect(named.said).toMatch(/in the landlock jail its commands will fail \(use --jail bwrap, or run codex with --sandbox danger-full-access to leave only confine's jail\)/);
    const missing = presetJail(undefined, [], codex, 'linux', no);
    expect(missing.jail).toBeUndefined();
    expect(missing.said).toMatch(/bwrap is not installed .*install bubblewrap, or run codex with --sandbox danger-full-access/);
    const r = checkRequest(confineRequest({ command: 'codex' }), 'linux', no);
    expect(r.jail).toBe('landlock');
    expect(r.said).toEqual([missing.said]);
  });
});
