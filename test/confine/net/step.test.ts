// The network step's decisions, on plans made by hand: how each jail is held to the proxy, and
// where it cannot be, a refusal before anything runs.
import * as fs from 'node:fs';

import { NET } from '../../../src/confine/landlock';
import { netOptionsStep } from '../../../src/confine/net/options';
import { NAMESPACE_PROXY_PORT, networkStep, proxyEnvironment } from '../../../src/confine/net/step';
import { ConfinePlan, emptyPlan } from '../../../src/confine/run';

function planWith(flags: Record<string, unknown>, over: Partial<ConfinePlan> = {}): ConfinePlan {
  const plan = emptyPlan({
    program: 'confine',
    command: 'true',
    args: [],
    dir: '/tmp',
    write: [],
    read: [],
    noIgnore: false,
    rm: false,
    verbose: false,
    cwd: '/tmp',
    env: { PATH: '/usr/bin:/bin' },
    flags: { headless: true, ...flags },
  });
  Object.assign(plan, { home: '/nonexistent-home', homes: ['/nonexistent-home'], dir: '/tmp', env: { PATH: '/usr/bin:/bin' } }, over);
  netOptionsStep(plan);
  return plan;
}

const ruleset = (handledAccessNet: bigint) => ({ abi: 4, handledAccessFs: 1n, handledAccessNet, scoped: 0n, rules: [], netRules: [] as { port: bigint; access: bigint }[] });
async function finish(plan: ConfinePlan): Promise<void> {
  for (const f of plan.afterExit) await f({ status: 0, signal: null });
}

describe('networkStep', () => {
  it('does nothing without --allow-host', async () => {
    const plan = planWith({});
    await networkStep(plan);
    expect(plan.env.HTTPS_PROXY).toBeUndefined();
    expect(plan.waitReasons).toEqual([]);
  });

  it("namespaces: the plan asks for the listener on 127.0.0.1:3128 inside, sent back over a socket", async () => {
    const plan = planWith({ 'allow-host': ['example.com'] }, { namespaces: { pid: true, net: true, uid: 1, gid: 1, mounts: [] } });
    await networkStep(plan);
    expect(plan.namespaces?.proxy).toEqual({ port: NAMESPACE_PROXY_PORT, socket: expect.any(Number) });
    expect(plan.afterStart).toHaveLength(1);
    expect(plan.env).toMatchObject(proxyEnvironment(NAMESPACE_PROXY_PORT));
    expect(plan.waitReasons).toContain('the proxy (--allow-host)');
    fs.closeSync(plan.namespaces!.proxy!.socket);
    await finish(plan);
  });

  it("Landlock alone: connecting by TCP only to the proxy's port, and seccomp lets TCP through", async () => {
    const plan = planWith({ 'allow-host': ['example.com'] }, { abi: 4, landlock: ruleset(NET.BIND_TCP | NET.CONNECT_TCP), seccomp: { denyTerminalInjection: true, denyNetwork: true } });
    await networkStep(plan);
    const port = Number(new URL(plan.env.HTTPS_PROXY).port);
    expect(plan.landlock!.netRules).toEqual([{ port: BigInt(port), access: NET.CONNECT_TCP }]);
    expect(plan.seccomp).toEqual({ denyTerminalInjection: true, denyNetwork: true, allowTcp: true });
    expect(plan.env.no_proxy).toBe('localhost,127.0.0.1,::1');
    expect(plan.warnings.join('\n')).toMatch(new RegExp(`only to port ${port}, the proxy's, but on any address`));
    await finish(plan);
  });

  it('Landlock alone refuses where Landlock has no TCP rules (ABI 3), or seccomp does not work', async () => {
    await expect(networkStep(planWith({ 'allow-host': ['example.com'] }, { abi: 3, landlock: ruleset(0n), seccomp: { denyTerminalInjection: true, denyNetwork: true } }))).rejects.toThrow(
      /--allow-host cannot be enforced here: there is no network namespace, and Landlock ABI 3 has no TCP rules/,
    );
    await expect(networkStep(planWith({ 'allow-host': ['example.com'] }, { abi: 6, landlock: ruleset(NET.BIND_TCP | NET.CONNECT_TCP), seccomp: undefined }))).rejects.toThrow(
      /seccomp filters do not work, so UDP would stay open/,
    );
  });

  it('the bwrap jail: the listener is put in its namespace once it exists (afterStart)', async () => {
    const plan = planWith({ 'allow-host': ['example.com'], jail: 'bwrap' });
    await networkStep(plan);
    expect(plan.afterStart).toHaveLength(1);
    expect(plan.env.HTTPS_PROXY).toBe(`http://127.0.0.1:${NAMESPACE_PROXY_PORT}`);
    await finish(plan);
  });
});
