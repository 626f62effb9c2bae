// --allow-host and --net-log, checked with the other usage errors before anything is made
// (checkRequest, src/confine/run.ts): each value parsed into host rules, the options checked
// against each other and the jail. Small and pure, so a run without --allow-host loads nothing of
// the proxy.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { usageError } from '../../errors';
import type { ConfineRequest } from '../request';
import { HostRule, HostRuleError } from './hosts';
import { parseAllowHosts, presetHostRules } from './sets';

export interface NetChoice {
  /** The --allow-host values as given, and their rules (@sets expanded). */
  given: string[];
  rules: HostRule[];
  /** --net-log FILE, resolved. */
  log?: string;
}

/**
 * The choice the request makes, or undefined when the network is not filtered (no --allow-host).
 * Throws a usage error (exit 2) naming the option for anything wrong.
 */
export function netChoice(
  request: Pick<ConfineRequest, 'allowHost' | 'netLog' | 'noNetwork' | 'cwd'>,
  jail: string,
  platform: NodeJS.Platform = process.platform,
): NetChoice | undefined {
  const given = request.allowHost;
  if (given.length === 0) {
    if (request.netLog !== undefined) throw usageError('--net-log records what passes through the proxy that --allow-host starts: give --allow-host HOST too');
    return undefined;
  }
  let rules: HostRule[];
  try {
    rules = parseAllowHosts(given);
  } catch (err) {
    if (err instanceof HostRuleError) throw usageError(err.message);
    throw err;
  }
  if (request.noNetwork) throw usageError('--allow-host and --no-network: --no-network lets the command reach no host at all; give one or the other');
  if (jail === 'none') throw usageError('--allow-host needs a jail: with --jail none nothing keeps the command from going around the proxy');
  if (platform !== 'linux' && platform !== 'darwin') throw usageError(`--allow-host is not supported on ${platform}`);
  let log: string | undefined;
  if (request.netLog !== undefined) {
    if (request.netLog === '') throw usageError('--net-log: give a file name');
    log = path.resolve(request.cwd, request.netLog);
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(path.dirname(log));
    } catch {
      st = undefined;
    }
    if (!st?.isDirectory()) throw usageError(`--net-log ${request.netLog}: the directory ${path.dirname(log)} does not exist`);
    if (fs.statSync(log, { throwIfNoEntry: false })?.isDirectory()) throw usageError(`--net-log ${request.netLog}: is a directory; give a file`);
  }
  return { given, rules, log };
}

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
