// The network step of arb confine's plan (src/confine/run.ts STEPS, after 'ruleset'): with
// --allow-host, starts confine's proxy and makes it the command's only way out.
//
//   - namespaces (the landlock jail's default): the command's network namespace has only
//     loopback; a listener on 127.0.0.1:3128 is made inside it by the child and its descriptor
//     sent back (native/linux/proxy_listener.cc), and confine serves the proxy on it, outside;
//   - Landlock alone: the proxy listens on 127.0.0.1 at a port the kernel picks; Landlock (ABI 4)
//     lets the command connect by TCP to that port only, and seccomp refuses every socket but
//     unix and TCP ones (UDP, raw, ICMP, io_uring). Landlock's rule is a port, not an address:
//     said on stderr;
//   - bwrap: bwrap makes the network namespace and waits (--block-fd) while a short-lived child
//     of confine joins it and makes the same listener there (loopbackListenerIn);
//   - Seatbelt (macOS): the proxy on 127.0.0.1, and a profile that lets the command connect to
//     that port on localhost only (src/confine/seatbelt.ts).
// HTTPS_PROXY, HTTP_PROXY, ALL_PROXY (and lower case) point at it; NO_PROXY covers loopback.
// Confine waits for the command meanwhile, and prints the record (-v) when it has ended.
import * as fs from 'node:fs';

import { ArbError, systemError } from '../../errors';
import type { ConfinePlan, ConfineStep } from '../run';
import { allowHostFor, showRule } from './hosts';
import { NetChoice, netChoiceOf, runRules } from './options';
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

const ports = new WeakMap<ConfinePlan, number>();

/** The port the proxy listens on for a plan, on the host's loopback (Seatbelt's profile). */
export function proxyPortOf(plan: ConfinePlan): number | undefined {
  return ports.get(plan);
}

function presetName(plan: ConfinePlan): string | undefined {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const presets = require('../presets') as typeof import('../presets');
  const p = plan.options.flags.preset;
  const explicit = p === undefined ? undefined : String(Array.isArray(p) ? p[0] : p);
  return presets.choosePreset(explicit, plan.options.command, plan.home, plan.env)?.name;
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

export const networkStep: ConfineStep = async (plan) => {
  const choice = netChoiceOf(plan);
  if (!choice) return;
  const preset = presetName(plan);
  const rules = runRules(choice, preset);
  const program = plan.options.program;
  const headless = Boolean(plan.options.flags.headless);

  // Decide how the proxy is reached before starting anything, so a refusal leaves nothing running.
  const darwin = process.platform === 'darwin';
  let mode: 'namespace' | 'bwrap' | 'landlock' | 'seatbelt';
  if (darwin) mode = 'seatbelt';
  else if (plan.options.flags.jail === 'bwrap') mode = 'bwrap';
  else if (plan.namespaces?.net) mode = 'namespace';
  else if (plan.landlock) {
    mode = 'landlock';
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
  } else {
    throw new ArbError('ARB_UNSUPPORTED', '--allow-host cannot be enforced by this jail', { hint: 'use the landlock jail (the default); nothing was run' });
  }

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
  if (mode === 'namespace') {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const native = require('../../native') as typeof import('../../native');
    const [mine, theirs] = native.socketPair();
    port = NAMESPACE_PROXY_PORT;
    (plan.namespaces as NonNullable<ConfinePlan['namespaces']>).proxy = { port, socket: theirs };
    // landlockSpawn returns once the command has exec'd: the listener was sent before that.
    plan.afterStart.push(async () => {
      fs.closeSync(theirs);
      const got = native.recvFds(mine, 1);
      fs.closeSync(mine);
      if (!got || got.fds.length !== 1) throw new ArbError('ARB_INTERNAL', "the proxy's listener did not come back from the command's network namespace");
      await proxy.serveFd(got.fds[0]);
    });
  } else if (mode === 'bwrap') {
    // bwrap makes the network namespace (src/confine/bwrap.ts: no --share-net) and waits on its
    // --block-fd until this hook has put the listener in it, from a child that joins it.
    port = NAMESPACE_PROXY_PORT;
    plan.afterStart.push(async (pid) => {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      const native = require('../../native') as typeof import('../../native');
      let fd: number;
      try {
        fd = native.loopbackListenerIn(pid, port);
      } catch (err) {
        throw systemError("put the proxy's listener in the bwrap jail's network namespace", `/proc/${pid}/ns/net`, err);
      }
      await proxy.serveFd(fd);
    });
  } else {
    port = await proxy.listenLoopback();
    ports.set(plan, port);
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
  if (!plan.waitReasons.some((w) => w.startsWith('the proxy'))) plan.waitReasons.push('the proxy (--allow-host)');
  plan.notes.push(
    `network: only through confine's proxy (http://127.0.0.1:${port}, in HTTPS_PROXY and the like), to ${rules.map(showRule).join(', ')}` +
      (headless ? '; other hosts refused (--headless)' : '; other hosts asked about'),
  );
  plan.afterExit.push(async () => {
    await proxy.close();
    if (plan.options.verbose) for (const line of record.describe()) fs.writeSync(2, `${program}: ${line}\n`);
    record.finish();
  });
};
