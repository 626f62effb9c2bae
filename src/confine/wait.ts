// Waiting for the command, the same way for every jail: confine starts it (the launcher, bwrap,
// sandbox-exec, or the command itself for --jail none), passes on the signals sent to confine
// alone by the one rule below, waits (libuv's SIGCHLD: no thread is held), runs the plan's
// hooks and --rm, and exits as the command did (128+N for a signal N).
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';

import { ArbError } from '../errors';
import { removeTree } from '../fork/remove';
import type { ConfinePlan } from './run';

/** How a child ended. */
export interface Ended {
  status: number | null;
  /** The signal's number, or null. */
  signal: number | null;
}

/** Signals confine passes on to the command while it waits. */
export const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'];

/**
 * The one rule for passing signals on. A signal the terminal generates (Ctrl-C, Ctrl-\) goes to
 * the whole foreground process group, the command included: passing it on too would deliver it
 * twice (and Claude Code exits on a second Ctrl-C). So SIGINT and SIGQUIT are passed on only
 * when confine's group is not the terminal's foreground group, i.e. when someone sent them to
 * confine alone; every other forwarded signal always. (The launcher's reaper and init apply the
 * same rule below confine, by the signal's si_code.)
 */
export function fromTerminal(sig: NodeJS.Signals): boolean {
  if (sig !== 'SIGINT' && sig !== 'SIGQUIT') return false;
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const native = require('../native') as typeof import('../native');
  const fg = native.addon().terminalForeground;
  if (!fg) return Boolean(process.stdin.isTTY);
  const t = fg();
  return t.foreground >= 0 && t.foreground === t.pgrp;
}

/** Passes on to `child` the signals sent to confine alone; returns the function that stops. */
export function forwardSignals(child: ChildProcess, isFromTerminal: (sig: NodeJS.Signals) => boolean = fromTerminal): () => void {
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const sig of FORWARDED) {
    const h = () => {
      if (child.exitCode !== null || child.signalCode !== null || isFromTerminal(sig)) return;
      try {
        child.kill(sig);
      } catch {
        /* it has already ended */
      }
    };
    handlers.set(sig, h);
    process.on(sig, h);
  }
  return () => {
    for (const [sig, h] of handlers) process.removeListener(sig, h);
  };
}

/** What waiting needs of a confine run (src/confine/run.ts ConfinePlan). */
export interface Waitable {
  program: string;
  command: string;
  verbose: boolean;
  fork?: { fork: string; base: string };
  rm: boolean;
  beforeStart: (() => Promise<void> | void)[];
  afterExit: ((result: Ended) => Promise<void> | void)[];
}

/** What waiting needs of a plan. */
export function waitable(plan: ConfinePlan): Waitable {
  return {
    program: plan.options.program,
    command: plan.options.command,
    verbose: plan.options.verbose,
    fork: plan.fork,
    rm: plan.rm,
    beforeStart: plan.beforeStart,
    afterExit: plan.afterExit,
  };
}

export interface Started {
  child: ChildProcess;
  /** Resolves once the command runs; rejects (the command never ran) with why. */
  started?: Promise<void>;
}

export interface WaitOptions {
  /** Turns how the child ended into the status (default: its status, 128+N for signal N). If it
   *  throws, the command never ran. */
  interpret?: (ended: Ended) => number;
  /** Turns a rejection of `started` into the error to throw. */
  failure?: (err: unknown) => Error;
  /** The rule's test of whether a signal came from the terminal (replaced in tests). */
  fromTerminal?: (sig: NodeJS.Signals) => boolean;
}

export function removeForkOf(run: Pick<Waitable, 'fork'>): void {
  if (!run.fork) return;
  removeTree(run.fork.fork);
  removeTree(run.fork.base);
}

/**
 * Starts the command and waits for it. If it never ran (spawn failed, the launcher reported a
 * failure, `interpret` threw), the fork confine made is removed and the error thrown.
 */
export async function runAndWait(run: Waitable, start: () => Started | ChildProcess, options: WaitOptions = {}): Promise<number> {
  let ended: Ended;
  let status: number;
  try {
    for (const f of run.beforeStart) await f();
    const s = start();
    const { child, started }: Started = 'child' in s ? s : { child: s };
    const stop = forwardSignals(child, options.fromTerminal);
    let notStarted: unknown;
    try {
      const done = new Promise<Ended>((resolve, reject) => {
        child.on('error', (err: NodeJS.ErrnoException) => {
          const file = child.spawnfile;
          reject(
            err.code === 'EACCES'
              ? new ArbError('ARB_COMMAND_NOT_EXECUTABLE', `${run.command}: cannot run '${file}': permission denied (EACCES)`, { exitCode: 126, cause: err })
              : new ArbError('ARB_IO', `cannot run '${file}': ${err.message}`, { cause: err }),
          );
        });
        child.on('close', (code, signal) => resolve({ status: code, signal: signal ? (os.constants.signals[signal] ?? 0) : null }));
      });
      if (started) {
        try {
          await started;
        } catch (err) {
          notStarted = err;
        }
      }
      ended = await done;
    } finally {
      stop();
    }
    if (notStarted !== undefined) throw options.failure ? options.failure(notStarted) : notStarted;
    status = options.interpret ? options.interpret(ended) : ended.signal !== null ? 128 + ended.signal : (ended.status ?? 1);
  } catch (err) {
    // The command never ran: leave nothing behind.
    removeForkOf(run);
    throw err;
  }
  for (const f of run.afterExit) await f(ended);
  if (run.rm && run.fork) {
    try {
      removeForkOf(run);
      if (run.verbose) fs.writeSync(2, `${run.program}: removed ${run.fork.fork} and ${run.fork.base}\n`);
    } catch (err) {
      fs.writeSync(2, `${run.program}: cannot remove the fork '${run.fork.fork}': ${(err as Error).message}\n`);
    }
  }
  return status;
}
