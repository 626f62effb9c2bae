// The network step's decisions, on each jail's own plan (planConfine, as --explain makes it:
// nothing forked or run) with the layers the kernel gave set by hand where a case needs them:
// how each jail is held to the proxy, and where it cannot be, a refusal before anything runs.
import { NET } from '../../../src/confine/landlock';
import { encodeLaunchPlan } from '../../../src/confine/launch';
import { NAMESPACE_PROXY_PORT, networkStep, proxyEnvironment } from '../../../src/confine/net/step';
import { confineRequest } from '../../../src/confine/request';
import { ConfinePlan, ConfineRequest, launchPlanOf, planConfine } from '../../../src/confine/run';

const env = { HOME: '/nonexistent-home', PATH: '/usr/bin:/bin' };

async function planWith(request: Partial<ConfineRequest>, over: Partial<ConfinePlan> = {}): Promise<ConfinePlan> {
  const plan = await planConfine(confineRequest({ program: 'confine', command: 'true', dir: '/tmp', env, headless: true, ...request }), 'explain');
  Object.assign(plan, over);
  return plan;
}

const ruleset = (handledAccessNet: bigint) => ({ abi: 4, handledAccessFs: 1n, handledAccessNet, scoped: 0n, rules: [], netRules: [] as { port: bigint; access: bigint }[] });
const namespaces = { pid: true, net: true, uid: 1, gid: 1, mounts: [] };
const words = (plan: ConfinePlan) => encodeLaunchPlan(launchPlanOf(plan)).toString('utf8').split('\0');

async function finish(plan: ConfinePlan): Promise<void> {
  for (const f of plan.afterExit) await f({ status: 0, signal: null });
}

describe('networkStep', () => {
  it('does nothing without --allow-host', async () => {
    const plan = await planWith({});
    expect(plan.net).toBeUndefined();
    await networkStep(plan);
    expect(plan.env.HTTPS_PROXY).toBeUndefined();
    expect(plan.proxy).toBeUndefined();
    expect(plan.waitReasons).not.toContain('the proxy (--allow-host)');
    expect(words(plan)).not.toContain('proxy-listen');
  });

  it('namespaces: the launcher is asked for the listener on 127.0.0.1:3128 inside, handed back before the command runs', async () => {
    const plan = await planWith({ allowHost: ['example.com'] }, { namespaces, landlock: ruleset(0n) });
    expect(plan.net?.given).toEqual(['example.com']);
    await networkStep(plan);
    expect(plan.proxy).toEqual({ port: NAMESPACE_PROXY_PORT, inside: true });
    expect(plan.afterStart).toHaveLength(1);
    expect(plan.env).toMatchObject(proxyEnvironment(NAMESPACE_PROXY_PORT));
    expect(plan.waitReasons).toContain('the proxy (--allow-host)');
    const w = words(plan);
    expect(w[w.indexOf('proxy-listen') + 1]).toBe(String(NAMESPACE_PROXY_PORT));
    // No listener handed over: the command is not left to run without its proxy.
    await expect(plan.afterStart[0]({})).rejects.toThrow(/the proxy's listener did not come back/);
    await finish(plan);
  });

  it("Landlock alone: connecting by TCP only to the proxy's port, and seccomp lets TCP through", async () => {
    const plan = await planWith(
      { allowHost: ['example.com'] },
      { namespaces: undefined, abi: 4, landlock: ruleset(NET.BIND_TCP | NET.CONNECT_TCP), seccomp: { denyTerminalInjection: true, denyNetwork: true } },
    );
    await networkStep(plan);
    const port = Number(new URL(plan.env.HTTPS_PROXY).port);
    expect(plan.proxy).toEqual({ port, inside: false });
    expect(plan.landlock!.netRules).toEqual([{ port: BigInt(port), access: NET.CONNECT_TCP }]);
    expect(plan.seccomp).toEqual({ denyTerminalInjection: true, denyNetwork: true, allowTcp: true });
    expect(plan.env.no_proxy).toBe('localhost,127.0.0.1,::1');
    expect(plan.warnings.join('\n')).toMatch(new RegExp(`only to port ${port}, the proxy's, but on any address`));
    // The launcher gets the port rule and the seccomp flag, and makes no listener.
    const w = words(plan);
    expect(w).not.toContain('proxy-listen');
    expect(w.slice(w.indexOf('seccomp'), w.indexOf('seccomp') + 4)).toEqual(['seccomp', '1', '1', '1']);
    expect(w.slice(w.indexOf('net-rule'), w.indexOf('net-rule') + 3)).toEqual(['net-rule', String(port), String(NET.CONNECT_TCP)]);
    await finish(plan);
  });

  it('Landlock alone refuses where Landlock has no TCP rules (ABI 3), or seccomp does not work', async () => {
    await expect(
      networkStep(await planWith({ allowHost: ['example.com'] }, { namespaces: undefined, abi: 3, landlock: ruleset(0n), seccomp: { denyTerminalInjection: true, denyNetwork: true } })),
    ).rejects.toThrow(/--allow-host cannot be enforced here: there is no network namespace, and Landlock ABI 3 has no TCP rules/);
    await expect(
      networkStep(await planWith({ allowHost: ['example.com'] }, { namespaces: undefined, abi: 6, landlock: ruleset(NET.BIND_TCP | NET.CONNECT_TCP), seccomp: undefined })),
    ).rejects.toThrow(/seccomp filters do not work, so UDP would stay open/);
  });

  it('the bwrap jail: no --share-net, and the launcher inside bwrap makes the same listener', async () => {
    const plan = await planWith({ allowHost: ['example.com'], jail: 'bwrap' });
    const shown = plan.notes.find((n) => n.startsWith('bwrap jail: '));
    expect(shown).toContain('--unshare-all');
    expect(shown).not.toContain('--share-net');
    expect(plan.namespaces).toBeUndefined(); // bubblewrap's, not the launcher's
    await networkStep(plan);
    expect(plan.proxy).toEqual({ port: NAMESPACE_PROXY_PORT, inside: true });
    expect(plan.afterStart).toHaveLength(1);
    expect(plan.env.HTTPS_PROXY).toBe(`http://127.0.0.1:${NAMESPACE_PROXY_PORT}`);
    expect(words(plan)).toContain('proxy-listen');
    await finish(plan);
  });
});
