// arb confine --explain [options] [CMD]: says what the command would be allowed to read, write
// and reach here, and which layers this kernel enforces, without forking or running anything.
// It takes confine's own steps (src/confine/run.ts) but the fork, so what it says is what
// confine would do, not a second description that could drift from it.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ArbError, formatError } from '../errors';
import { isInside } from '../paths/inside';
import { filterEnvironment } from './environment';
import type { Hardening } from './hardening';
import { rightNames, scopeNames } from './landlock';
import { explainHosts } from './net/options';
import type { Grant } from './policy';
import type { ConfineOptions, ConfinePlan } from './run';

function tilde(home: string, p: string): string {
  return home && p !== home && isInside(p, home, 'lexical') ? `~${p.slice(home.length)}` : p;
}

function table(rows: [string, string][], indent = '  '): string[] {
  const width = Math.min(40, Math.max(0, ...rows.map(([a]) => a.length)));
  return rows.map(([a, b]) => `${indent}${a.padEnd(width)}  ${b}`.trimEnd());
}

/** The text --explain prints for a plan built without its fork (pure but for os.release). */
export function describe(plan: ConfinePlan, h: Hardening | undefined, options: ConfineOptions): string[] {
  const out: string[] = [];
  const home = plan.home;
  const ns = h?.mode === 'namespaces';
  const command = options.command ? [options.command, ...options.args].join(' ') : undefined;
  out.push(`${options.program} --explain: what ${command ? `\`${command}\`` : 'a command'} would get here; nothing was run.`);
  out.push('');
  const jail = plan.jail;
  if (jail !== 'landlock') out.push(`Jail:      ${jail} (what follows is what confine grants; that jail enforces it${jail === 'bwrap' ? (plan.withoutLandlock ? `, without Landlock inside: ${plan.withoutLandlock}` : ', with Landlock inside') : ', not Landlock'})`);
  out.push(options.dir !== undefined ? `Works in:  ${plan.dir} itself (-d)` : `Works in:  a new fork of ${plan.dir}, made next to it (${path.basename(plan.dir)}.N)`);
  if (command && plan.file) out.push(`Runs:      ${plan.file}${ns ? ' (confine stays outside the namespaces as their reaper)' : ''}`);

  out.push('');
  out.push(`Layers this kernel (Linux ${os.release()}) enforces:`);
  const ll = plan.landlock;
  const rows: [string, string][] = [];
  if (ll) {
    rows.push([`Landlock ABI ${plan.abi}`, `enforced: every file-system right it knows is denied unless granted (${rightNames(ll.handledAccessFs).join(', ')})`]);
    const scoped = scopeNames(ll.scoped);
    rows.push(['scopes', scoped.length ? `enforced: ${scoped.join(' and ')} cannot reach processes outside` : 'not enforced: Landlock ABI 6 (Linux 6.12) is needed to scope signals and abstract unix sockets']);
    rows.push([
      'unix sockets',
      plan.abi >= 9
        ? 'enforced by Landlock (ABI 9): pathname sockets only in the writable paths'
        : ns
          ? 'not checked by Landlock below ABI 9; the namespaces hide those in /run, $XDG_RUNTIME_DIR, /tmp and the home directory, not those elsewhere (the writable paths, /var/tmp, /dev/log, a daemon\'s under /var/lib)'
          : 'NOT enforced: Landlock checks pathname sockets only from ABI 9, and without namespaces nothing hides them',
    ]);
    rows.push(['network', ll.handledAccessNet ? 'TCP bind and connect denied by Landlock' : 'not restricted by Landlock (open unless --no-network)']);
  }
  rows.push(['no-new-privs', 'enforced: set-user-ID programs (sudo) cannot gain privileges']);
  for (const layer of h?.layers ?? []) rows.push([layer.name, `${layer.enforced ? 'enforced' : 'NOT enforced'}: ${layer.detail}`]);
  out.push(...table(rows));

  const grants: Grant[] = plan.policy?.grants ?? [];
  const inHome = (g: Grant) => plan.homes.some((hm) => isInside(g.path, hm, 'lexical'));
  const readable = grants.filter((g) => g.access === 'read' && inHome(g));
  const writable = grants.filter((g) => g.access === 'write');
  out.push('');
  out.push('It can read:');
  out.push(`  everything outside ${plan.homes.join(' and ')} that your permissions let you read${ns ? ' (but /run and $XDG_RUNTIME_DIR, masked, and /tmp, private)' : ''}`);
  out.push(`  in ${plan.homes.length > 1 ? 'the home directories' : 'the home directory'}, only the writable paths below and:`);
  if (readable.length === 0) out.push('    nothing else');
  out.push(...table(readable.map((g) => [tilde(home, g.path), g.why + (g.given ? ` (as ${tilde(home, g.given)})` : '')]), '    '));
  out.push(ns ? '  (the rest of the home directory is not even there: a masked, empty directory)' : '  (the names of other files there can be listed, not read)');

  out.push('');
  out.push(
    ns
      ? 'It can write (only these; outside them even chmod, chown and touch fail with EROFS):'
      : 'It can write (only these; but chmod, chown and touch still work on your files anywhere: Landlock does not cover metadata):',
  );
  const privateDirs = new Set((ns ? (h?.mounts.ops ?? []) : []).filter((op) => op.kind === 'tmpfs').map((op) => op.path));
  const wrows: [string, string][] = writable.map((g) => {
    const where = options.dir === undefined && g.path === plan.dir ? `${g.path}.N (the fork)` : tilde(home, g.path);
    return [where, g.why + (privateDirs.has(g.path) ? ' (private to the command: a tmpfs of its own)' : '')];
  });
  out.push(...table(wrows));

  out.push('');
  out.push('It can reach:');
  const hosts = explainHosts(plan.net, plan.preset?.name);
  const viaProxy =
    plan.jail === 'seatbelt'
      ? " (Seatbelt: only the proxy's port on localhost)"
      : ns || plan.jail === 'bwrap'
        ? ' (a network namespace with only loopback, and the listener of the proxy in it)'
        : h
          ? " (Landlock: TCP to the proxy's port only, on any address; seccomp: no socket but unix and TCP ones)"
          : '';
  out.push(`  network: ${hosts.length ? `only through confine's proxy${viaProxy}` : (h?.network ?? 'open')}`);
  out.push(...hosts);
  out.push(
    `  processes: ${ns ? 'only its own (a PID namespace with its own /proc)' : `all of yours are visible in /proc, command lines included${ll && ll.scoped ? '; signals reach only its own (Landlock scope)' : '; and it can signal them'}`}`,
  );
  out.push(`  terminal: its own${h?.seccomp ? ', without typing into it (TIOCSTI and TIOCLINUX denied)' : ', and it can type into it (TIOCSTI) where the kernel allows'}`);

  const env = filterEnvironment(options.env, listKeep(options, plan));
  out.push('');
  out.push(
    env.removed.length
      ? `Environment: ${env.removed.length} variable${env.removed.length > 1 ? 's' : ''} that look${env.removed.length > 1 ? '' : 's'} secret removed: ${env.removed.map((r) => r.name).join(', ')} (keep one with -e NAME)`
      : 'Environment: nothing looks secret; passed on whole',
  );
  if (h) for (const w of h.warnings) out.push(`Warning: ${w}`);
  for (const w of plan.warnings) if (!h?.warnings.includes(w)) out.push(`Warning: ${w}`);
  return out;
}

function listKeep(options: ConfineOptions, plan: ConfinePlan): string[] {
  return [...options.keepEnv, ...plan.keepEnv];
}

/**
 * Builds confine's plan without the fork (and without the command when none is named), prints
 * what it would do on stdout, and resolves with 0, or 1 where confine would refuse to run.
 */
export async function explain(options: ConfineOptions): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const run = require('./run') as typeof import('./run');
  // Confine's own plan for the jail asked for, but what forks, starts the broker's server or
  // chooses how to run: what they would grant is said, nothing is made or started.
  let plan: ConfinePlan;
  try {
    plan = await run.planConfine(options, 'explain');
  } catch (err) {
    if (!(err instanceof ArbError) || err.code === 'ARB_USAGE') throw err;
    fs.writeSync(1, `${options.program} --explain: confine would refuse to run here, and runs nothing unconfined:\n  ${formatError(options.program, err)}\n`);
    return 1;
  }
  fs.writeSync(1, `${describe(plan, plan.hardening, options).join('\n')}\n`);
  return 0;
}
