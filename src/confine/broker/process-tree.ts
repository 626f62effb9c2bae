// Stopping a program the broker started together with what it started in turn (git under gh, a
// shell's children under CONFINE_ASK). These stay in confine's process group, so that they can use
// the terminal, so the tree is found from the process table (ps, on Linux and macOS alike).
import { execFileSync } from 'node:child_process';

import { systemProgram } from '../../paths/programs';

/** A process and every process under it; just the process if ps cannot be run. */
export function processTree(pid: number): number[] {
  let table: string;
  try {
    table = execFileSync(systemProgram('ps'), ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return [pid];
  }
  const children = new Map<number, number[]>();
  for (const line of table.split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    if (!Number.isInteger(p) || !Number.isInteger(pp)) continue;
    const list = children.get(pp) ?? [];
    list.push(p);
    children.set(pp, list);
  }
  const out: number[] = [];
  const seen = new Set<number>();
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop() as number;
    if (seen.has(p)) continue;
    seen.add(p);
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/** Sends `signal` to each of `pids`, ignoring those already gone. */
export function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const p of pids) {
    try {
      process.kill(p, signal);
    } catch {
      /* gone */
    }
  }
}

/** Sends `signal` to a process and everything under it. */
export function killTree(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid !== undefined) signalAll(processTree(pid), signal);
}
