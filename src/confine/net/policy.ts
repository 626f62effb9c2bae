// Whether a host may be reached: the list (--allow-host, @sets, the preset's API hosts), then
// what "Allow always" kept in ~/.config/confine/hosts, then what was answered earlier in this
// run, then asking, as the broker asks about gh (CONFINE_ASK, a dialog, nobody with --headless).
//
// An answer holds for the rest of the run: "once" allows the host until the command ends (a
// client opens many connections; asking at each would be asking all day), "no" refuses it until
// then, "always" also keeps it in the file. One question per host at a time: connections that
// arrive while it is asked wait for the same answer.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { systemError } from '../../errors';
import { HostRule, HostRuleError, Target, allowHostFor, matchTarget, parseHostRule, showTarget } from './hosts';
import type { Decision } from './proxy';

export function hostsFilePath(home: string): string {
  return path.join(home, '.config', 'confine', 'hosts');
}

const HEADER =
  '# confine: hosts a confined command may reach without asking, one --allow-host value a line.\n' +
  '# Added by "Allow always"; remove a line to be asked again.\n';

/** The rules kept in the hosts file; a line that is not a host is skipped (and said once). */
export function parseHostsFile(text: string, from: string): { rules: HostRule[]; bad: string[] } {
  const rules: HostRule[] = [];
  const bad: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    try {
      rules.push(parseHostRule(line, from));
    } catch (err) {
      if (err instanceof HostRuleError) bad.push(line);
      else throw err;
    }
  }
  return { rules, bad };
}

export function readHostsFile(file: string, from: string): HostRule[] {
  try {
    return parseHostsFile(fs.readFileSync(file, 'utf8'), from).rules;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw systemError('read', file, err);
  }
}

/** Adds a host to the file (once): 0600 in a 0700 directory, never written through a link. */
export function addHost(file: string, value: string): void {
  if (/[\n\r#\s]/.test(value) || value === '') throw new RangeError(`bad host ${JSON.stringify(value)}`);
  if (readHostsFile(file, 'always').some((r) => r.given === value)) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  try {
    const st = fs.fstatSync(fd);
    if ((st.mode & 0o077) !== 0) fs.fchmodSync(fd, 0o600);
    let text = st.size === 0 ? `${HEADER}${value}\n` : `${value}\n`;
    if (st.size > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, st.size - 1);
      if (last[0] !== 0x0a) text = `\n${text}`;
    }
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

export type HostAnswer = 'once' | 'always' | 'no';

/** Asks whether a host may be reached; undefined when nobody can be asked (and why). */
export type HostAsker = (target: Target) => Promise<{ answer: HostAnswer; by: string; note?: string }>;

export interface HostPolicyOptions {
  rules: readonly HostRule[];
  /** ~/.config/confine/hosts, read afresh at each new host (an edit by hand counts at once). */
  hostsFile?: string;
  /** How to ask; undefined: nobody is asked (--headless), everything else is refused. */
  ask?: HostAsker;
  /** Why nobody is asked, for the 403 (e.g. '--headless'). */
  noAskReason?: string;
  /** Said on stderr (a failed write of the hosts file). */
  warn?: (message: string) => void;
}

export class HostPolicy {
  private readonly answered = new Map<string, Decision>();
  private readonly pending = new Map<string, Promise<Decision>>();

  constructor(private readonly options: HostPolicyOptions) {}

  async decide(target: Target): Promise<Decision> {
    const rule = matchTarget(this.options.rules, target);
    if (rule) return { allowed: true, by: rule.from === '--allow-host' ? `--allow-host ${rule.given}` : rule.from, exact: rule.from === '--allow-host' && !rule.wildcard };
    if (this.options.hostsFile) {
      const kept = matchTarget(readHostsFile(this.options.hostsFile, 'always'), target);
      if (kept) return { allowed: true, by: `always (${this.options.hostsFile})`, exact: !kept.wildcard };
    }
    const key = showTarget(target);
    const earlier = this.answered.get(key);
    if (earlier) return earlier;
    const asking = this.pending.get(key);
    if (asking) return asking;
    const question = this.askAbout(target, key);
    this.pending.set(key, question);
    try {
      return await question;
    } finally {
      this.pending.delete(key);
    }
  }

  private async askAbout(target: Target, key: string): Promise<Decision> {
    let decision: Decision;
    if (!this.options.ask) {
      decision = { allowed: false, by: 'not on the list', note: this.options.noAskReason };
    } else {
      const r = await this.options.ask(target);
      if (r.answer === 'no') {
        decision = { allowed: false, by: r.note ? 'not on the list' : `not on the list; asked (${r.by}): no`, note: r.note };
      } else {
        decision = { allowed: true, by: `asked (${r.by}): ${r.answer}`, exact: true };
        if (r.answer === 'always' && this.options.hostsFile) {
          try {
            addHost(this.options.hostsFile, allowHostFor(target));
          } catch (err) {
            this.options.warn?.(`cannot keep ${allowHostFor(target)} in ${this.options.hostsFile}: ${(err as Error).message}; allowed for this run only`);
          }
        }
      }
    }
    this.answered.set(key, decision);
    return decision;
  }
}
