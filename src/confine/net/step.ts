// The network step of arb confine's plan (src/confine/run.ts: each jail's plan calls it last,
// before deciding to wait): with --allow-host, starts confine's proxy and makes it the command's
// only way out.
//
//   - a network namespace (the landlock jail's, or bubblewrap's with --jail bwrap): it has only
//     loopback; the launcher, inside it, makes a listener on 127.0.0.1:3128 and hands it to
//     confine over its report socket before the command runs (a `proxy-listen` record:
//     native/launcher/proxy_listener.cc), and confine serves the proxy on it, outside;
//   - Landlock alone: the proxy listens on 127.0.0.1 at a port the kernel picks; Landlock (ABI 4)
//     lets the command connect by TCP to that port only, and seccomp refuses every socket but
//     unix and TCP ones (UDP, raw, ICMP, MPTCP, io_uring). Landlock's rule is a port, not an
//     address: said on stderr;
//   - Seatbelt (macOS): the proxy on 127.0.0.1, and a profile that lets the command connect to
//     that port on localhost only (src/confine/seatbelt.ts).
// HTTPS_PROXY, HTTP_PROXY, ALL_PROXY (and lower case) point at it; NO_PROXY covers loopback.
// Confine waits for the command meanwhile (it serves the proxy), and prints the record (-v) when
// it has ended.
import * as fs from 'node:fs';

import { ArbError, systemError } from '../../errors';
import type { ConfinePlan } from '../run';
import { allowHostFor, showRule } from './hosts';
import { NetChoice, runRules } from './options';
import { HostAsker, HostPolicy, hostsFilePath } from './policy';
import { NetProxy, fromThisUser } from './proxy';
import { NetRecord } from './record';

/** The proxy's port inside the command's own network namespace (nothing else listens there). */
export const NAMESPACE_PROXY_PORT = 3128;

/** The variables that name the proxy, and the loopback names it is not used for. */
export function proxyEnvironment(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTPS_PROXY: url,
    https_proxy: url,
    HTTP_PROXY: url,
    http_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

/**
 * How the jail holds the command to the proxy: a listener the launcher makes inside a network
 * namespace, Landlock's TCP port rule with seccomp, or Seatbelt's profile. Throws where the jail
 * cannot enforce it (never run open). Pure: --explain asks it too.
 */
export function proxyMode(plan: ConfinePlan): 'inside' | 'landlock' | 'seatbelt' {
  if (plan.jail === 'seatbelt') return 'seatbelt';
  if (plan.jail === 'bwrap' || plan.namespaces?.net) return 'inside';
  if (plan.jail === 'landlock' && plan.landlock) {
    if (plan.landlock.handledAccessNet === 0n || plan.abi < 4) {
      throw new ArbError('ARB_UNSUPPORTED', `--allow-host cannot be enforced here: there is no network namespace, and Landlock ABI ${plan.abi} has no TCP rules (ABI 4, Linux 6.7)`, {
        hint: 'run where user namespaces work, or on Linux 6.7 or later; nothing was run',
      });
    }
    if (!plan.seccomp?.denyNetwork) {
      throw new ArbError('ARB_UNSUPPORTED', '--allow-host cannot be enforced here: there is no network namespace, and seccomp filters do not work, so UDP would stay open', {
        hint: 'run where user namespaces or seccomp work; nothing was run',
      });
    }
    return 'landlock';
  }
  throw new ArbError('ARB_UNSUPPORTED', '--allow-host cannot be enforced by this jail', { hint: 'use the landlock jail (the default); nothing was run' });
}

function writablePaths(plan: ConfinePlan): string[] {
  return [plan.dir, ...(plan.policy?.grants ?? []).filter((g) => g.access === 'write').map((g) => g.path)];
}

function makeAsker(plan: ConfinePlan): HostAsker {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { ask } = require('../broker/ask') as typeof import('../broker/ask');
  return async (target) => {
    const r = await ask(
      {
        argv: ['connect', allowHostFor(target)],
        cwd: plan.dir,
        offerAlways: true,
        heading: "A confined command asks to reach a host not on its list, through confine's proxy:",
      },
      // The asker can tell this question from one about a tool by CONFINE_ASK_KIND.
      { env: { ...plan.options.env, CONFINE_ASK_KIND: 'host' }, writable: writablePaths(plan) },
    );
    return r;
  };
}

function openLog(choice: NetChoice): number | undefined {
  if (!choice.log) return undefined;
  try {
    // Appended to, never followed through a link the command could have planted.
    return fs.openSync(choice.log, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw systemError('open the --net-log file', choice.log, err);
  }
}

/** With --allow-host (plan.net): the proxy started, and the plan holding the command to it. */
export async function networkStep(plan: ConfinePlan): Promise<void> {
  const choice = plan.net;
  if (!choice) return;
  // Decided before anything starts, so a refusal leaves nothing running.
  const mode = proxyMode(plan);
  const rules = runRules(choice, plan.preset?.name);
  const program = plan.options.program;
  const headless = plan.options.headless;

  const logFd = openLog(choice);
  const record = new NetRecord(logFd);
  const policy = new HostPolicy({
    rules,
    hostsFile: hostsFilePath(plan.home),
    ask: headless ? undefined : makeAsker(plan),
    noAskReason: headless ? 'not asked: --headless' : undefined,
    warn: (m) => fs.writeSync(2, `${program}: ${m}\n`),
  });
  // On the machine's loopback (Landlock alone) other users could connect too: only the user's
  // own sockets are served. In a network namespace only the command can reach it.
  const accept = mode === 'landlock' ? (s: import('node:net').Socket) => fromThisUser(s) : undefined;
  const proxy = new NetProxy({ decide: (t) => policy.decide(t), record, program, accept });

  let port: number;
  if (mode === 'inside') {
    // The launcher makes the listener in the namespace (the launcher's own, or bwrap's around
    // it) and hands it over before the command runs; confine serves on it once it has it.
    port = NAMESPACE_PROXY_PORT;
    plan.proxy = { port, inside: true };
    plan.afterStart.push(async ({ listener }) => {
      if (listener === undefined) throw new ArbError('ARB_INTERNAL', "the proxy's listener did not come back from the command's network namespace", { hint: 'nothing was run' });
      await proxy.serveFd(listener);
    });
  } else {
    port = await proxy.listenLoopback();
    plan.proxy = { port, inside: false };
    if (mode === 'landlock') {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      const { NET } = require('../landlock') as typeof import('../landlock');
      plan.landlock!.netRules.push({ port: BigInt(port), access: NET.CONNECT_TCP });
      plan.seccomp!.allowTcp = true;
      plan.notes.push(`seccomp: TCP sockets let through, for Landlock to allow connecting to port ${port} only`);
      plan.warnings.push(
        `--allow-host without a network namespace: Landlock lets the command connect by TCP only to port ${port}, the proxy's, but on any address (its rules name ports, not hosts), so a host of its choosing listening on port ${port} could be reached; UDP and other sockets are refused (seccomp)`,
      );
    }
  }

  Object.assign(plan.env, proxyEnvironment(port));
  plan.waitReasons.push('the proxy (--allow-host)');
  plan.notes.push(
    `network: only through confine's proxy (http://127.0.0.1:${port}, in HTTPS_PROXY and the like), to ${rules.map(showRule).join(', ')}` +
      (headless ? '; other hosts refused (--headless)' : '; other hosts asked about'),
  );
  plan.afterExit.push(async () => {
    await proxy.close();
    if (plan.options.verbose) for (const line of record.describe()) fs.writeSync(2, `${program}: ${line}\n`);
    record.finish();
  });
}
