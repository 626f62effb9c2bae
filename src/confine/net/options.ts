// --allow-host and --net-log, checked before anything is made (the first of confine's steps):
// each value parsed into host rules, the options checked against each other and the jail.
// Small and pure, so a run without --allow-host loads nothing of the proxy.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { usageError } from '../../errors';
import type { ConfinePlan, ConfineStep } from '../run';
import { HostRule, HostRuleError } from './hosts';
import { parseAllowHosts, presetHostRules } from './sets';

export interface NetChoice {
  /** The --allow-host values as given, and their rules (@sets expanded). */
  given: string[];
  rules: HostRule[];
  /** --net-log FILE, resolved. */
  log?: string;
}

function listFlag(v: unknown): string[] {
  if (v === undefined || v === null || v === false) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** Whether the network is filtered (some --allow-host given). */
export function filtersNetwork(flags: Record<string, unknown>): boolean {
  return listFlag(flags['allow-host']).length > 0;
}

/**
 * The choice the options make, or undefined when the network is not filtered. Throws a usage
 * error (exit 2) naming the option for anything wrong.
 */
export function netChoice(flags: Record<string, unknown>, cwd: string, platform: NodeJS.Platform = process.platform): NetChoice | undefined {
  const given = listFlag(flags['allow-host']);
  const logs = listFlag(flags['net-log']);
  if (logs.length > 1) throw usageError(`--net-log was given ${logs.length} times; give it once`);
  if (given.length === 0) {
    if (logs.length) throw usageError('--net-log records what passes through the proxy that --allow-host starts: give --allow-host HOST too');
    return undefined;
  }
  let rules: HostRule[];
  try {
    rules = parseAllowHosts(given);
  } catch (err) {
    if (err instanceof HostRuleError) throw usageError(err.message);
    throw err;
  }
  if (flags['no-network']) throw usageError('--allow-host and --no-network: --no-network lets the command reach no host at all; give one or the other');
  const jail = flags.jail === undefined ? undefined : String(flags.jail);
  if (jail === 'none') throw usageError('--allow-host needs a jail: with --jail none nothing keeps the command from going around the proxy');
  if (platform !== 'linux' && platform !== 'darwin') throw usageError(`--allow-host is not supported on ${platform}`);
  let log: string | undefined;
  if (logs.length) {
    if (logs[0] === '') throw usageError('--net-log: give a file name');
    log = path.resolve(cwd, logs[0]);
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(path.dirname(log));
    } catch {
      st = undefined;
    }
    if (!st?.isDirectory()) throw usageError(`--net-log ${logs[0]}: the directory ${path.dirname(log)} does not exist`);
    if (fs.statSync(log, { throwIfNoEntry: false })?.isDirectory()) throw usageError(`--net-log ${logs[0]}: is a directory; give a file`);
  }
  return { given, rules, log };
}

const chosen = new WeakMap<ConfinePlan, NetChoice>();

/** The choice the first step made for a plan (for the network step and --explain). */
export function netChoiceOf(plan: ConfinePlan): NetChoice | undefined {
  return chosen.get(plan);
}

/** The first step: checks --allow-host and --net-log before anything is forked or started. */
export const netOptionsStep: ConfineStep = (plan) => {
  const choice = netChoice(plan.options.flags, plan.options.cwd);
  if (choice) chosen.set(plan, choice);
};

/** Every rule for a run: --allow-host's, then the preset's API hosts. */
export function runRules(choice: NetChoice, preset: string | undefined): HostRule[] {
  return [...choice.rules, ...presetHostRules(preset)];
}

/** The lines --explain prints about the hosts (none when the network is not filtered). */
export function explainHosts(choice: NetChoice | undefined, preset: string | undefined): string[] {
  if (!choice) return [];
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { showRule } = require('./hosts') as typeof import('./hosts');
  const rules = runRules(choice, preset);
  const out = [`  hosts: only these, through confine's proxy (HTTPS_PROXY); others are refused, or asked about (not with --headless):`];
  const width = Math.min(40, Math.max(...rules.map((r) => showRule(r).length)));
  for (const r of rules) out.push(`    ${showRule(r).padEnd(width)}  ${r.port === undefined ? 'ports 443, 80' : `port ${r.port}`} (${r.from})`);
  out.push('    and what "Allow always" kept in ~/.config/confine/hosts');
  if (choice.log) out.push(`  record: each connection, as JSON lines, in ${choice.log}`);
  return out;
}
