// Which jail confines the command: `--jail landlock` (Linux, the default), `seatbelt` (macOS, the
// default), `bwrap` (bubblewrap, Linux) or `none` (no isolation, said every time). Pure checks of
// the choice against the platform and the other options; the jails live in their own modules.
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ArbError, usageError } from '../errors';
import type { MountSpec } from './mounts';
import type { ConfineOptions, ConfinePlan, ConfineStep } from './run';

export type JailName = 'landlock' | 'seatbelt' | 'bwrap' | 'none';

export const JAILS: Readonly<Record<string, readonly JailName[]>> = {
  linux: ['landlock', 'bwrap', 'none'],
  darwin: ['seatbelt', 'none'],
};

export function jailsFor(platform: NodeJS.Platform = process.platform): readonly JailName[] {
  return JAILS[platform] ?? ['none'];
}

export function defaultJail(platform: NodeJS.Platform = process.platform): JailName {
  return platform === 'darwin' ? 'seatbelt' : 'landlock';
}

/**
 * The jail to use: the one named (checked against the platform) or the platform's default.
 * `--mount` needs the bwrap jail: the others cannot mount anything, and silently ignoring a
 * mount would run the command with less than was asked for.
 */
export function chooseJail(
  name: string | undefined,
  mounts: readonly MountSpec[] = [],
  platform: NodeJS.Platform = process.platform,
): JailName {
  const known = jailsFor(platform);
  const jail = (name ?? defaultJail(platform)) as JailName;
  if (!known.includes(jail)) {
    const where = platform === 'darwin' ? 'macOS' : platform === 'linux' ? 'Linux' : platform;
    const other = jail === 'seatbelt' ? ' (seatbelt is macOS only)' : jail === 'landlock' || jail === 'bwrap' ? ` (${jail} is Linux only)` : '';
    throw usageError(`--jail: unknown jail '${name}' on ${where}${other}: use one of ${known.join(', ')}`);
  }
  if (mounts.length > 0 && jail !== 'bwrap') {
    throw usageError(`--mount needs --jail bwrap: the ${jail} jail cannot mount anything (given: ${mounts.map((m) => m.spec).join(', ')})`);
  }
  return jail;
}

/** Printed on stderr every time the command runs with --jail none. */
export const NO_JAIL_WARNING =
  'WARNING: --jail none: the command runs WITHOUT ANY ISOLATION: it can read your secrets (~/.ssh, ~/.aws, tokens) and write anywhere you can. Only the working directory is chosen for it.';

// --- confine's steps for the chosen jail (src/confine/run.ts builds the plan from them) -------

function listFlag(v: unknown): string[] {
  if (v === undefined || v === null || v === false) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

function singleFlag(v: unknown, flag: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) {
    if (v.length === 1) return String(v[0]);
    throw usageError(`${flag} was given ${v.length} times; give it once`);
  }
  return String(v);
}

/** The jail, mounts and preset a confine run asked for, checked before anything is made. */
export interface JailChoice {
  jail: JailName;
  mounts: MountSpec[];
  /** --preset as given ('none' turns the choice by command name off). */
  preset?: string;
}

export function jailChoice(flags: Record<string, unknown>, platform: NodeJS.Platform = process.platform): JailChoice {
  // Loaded here: mounts and presets are small, but the Landlock path needs neither at start.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { parseMounts } = require('./mounts') as typeof import('./mounts');
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { getPreset } = require('./presets') as typeof import('./presets');
  const mounts = parseMounts(listFlag(flags.mount));
  const jail = chooseJail(singleFlag(flags.jail, '--jail'), mounts, platform);
  const preset = singleFlag(flags.preset, '--preset');
  if (preset !== undefined && preset !== 'none') getPreset(preset);
  return { jail, mounts, preset };
}

/**
 * The jail a preset runs its agent in when no --jail is given (Codex: bwrap, so that its own
 * bubblewrap sandbox nests; see presets.ts CODEX_NESTING), and what confine says about it once.
 * Where bwrap is missing, or another jail was named, the agent's own sandbox cannot start: said
 * once, with how to run.
 */
export function presetJail(
  flags: Record<string, unknown>,
  command: string | undefined,
  platform: NodeJS.Platform = process.platform,
  haveBwrap: () => boolean = bwrapInstalled,
): { jail?: JailName; note?: string; warning?: string } {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { getPreset, presetForCommand } = require('./presets') as typeof import('./presets');
  const named = singleFlag(flags.preset, '--preset');
  if (named === 'none' || platform !== 'linux') return {};
  const preset = named !== undefined ? getPreset(named) : presetForCommand(command);
  const want = preset?.linuxJail;
  if (!preset || !want) return {};
  const given = singleFlag(flags.jail, '--jail');
  const howto = `run ${preset.command} with --sandbox danger-full-access to leave only confine's jail`;
  if (given === undefined && listFlag(flags.mount).length === 0) {
    if (haveBwrap()) return { jail: want.jail, note: `the ${want.jail} jail for ${preset.command}: ${want.why} (--jail landlock to not)` };
    return { warning: `${want.why}, and bwrap is not installed for the bwrap jail, where it nests: its commands will fail (install bubblewrap, or ${howto})` };
  }
  if (given !== undefined && given !== want.jail && given !== 'none') {
    return { warning: `${want.why}: in the ${given} jail its commands will fail (use --jail ${want.jail}, or ${howto})` };
  }
  return {};
}

function bwrapInstalled(): boolean {
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    (require('./bwrap') as typeof import('./bwrap')).findBwrap(process.env.PATH);
    return true;
  } catch {
    return false;
  }
}

/**
 * The preset step (after 'environment', before 'scrub-environment' which reads plan.keepEnv): the
 * agent's own key is kept, its directories are made if missing and granted, and confine says so.
 */
const chosenPresets = new WeakMap<ConfinePlan, import('./presets').ResolvedPreset>();

export const presetStep: ConfineStep = (plan) => {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const presets = require('./presets') as typeof import('./presets');
  const explicit = singleFlag(plan.options.flags.preset, '--preset');
  const preset = presets.choosePreset(explicit, plan.options.command, plan.home, plan.env);
  if (!preset) return;
  chosenPresets.set(plan, preset);
  // Only the keys that are set: -v would otherwise list every provider opencode knows.
  plan.keepEnv.push(...preset.keepEnv.filter((v) => plan.env[v] !== undefined));
  plan.warnings.push(presets.presetNote(preset, plan.home, plan.env));
};

/**
 * Just before 'policy', once the command was found and the fork made: the preset's directories
 * are made if missing (a jail grants only what exists, and an agent run for the first time must
 * keep its state), then granted.
 */
export const presetPathsStep: ConfineStep = (plan) => {
  const preset = chosenPresets.get(plan);
  if (!preset) return;
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const presets = require('./presets') as typeof import('./presets');
  presets.ensurePresetDirs(preset, plan.home);
  for (const p of preset.writable) {
    if (preset.ifExists.includes(p) && !fs.existsSync(p)) continue;
    plan.extraWritable.push({ path: p, why: `the ${preset.name} preset: its state` });
  }
  const c = preset.copiedFile;
  if (c && process.platform === 'darwin') {
    // Seatbelt denies making the lock and temporary file with EPERM, and Claude Code then writes
    // in place; and CLAUDE_CONFIG_DIR would change its keychain entry there. So the file itself.
    if (fs.existsSync(c.file)) plan.extraWritable.push({ path: c.file, why: `the ${preset.name} preset: its state` });
  } else if (c && !plan.options.flags.explain) {
    // (--explain runs nothing, so copies nothing either.)
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { copyIn, copyBack } = require('./state-copy') as typeof import('./state-copy');
    const copied = copyIn(c.file, path.join(c.dir, path.basename(c.file)));
    if (copied.stale) plan.warnings.push(`a copy of ${c.file} that an earlier run did not copy back is kept in ${copied.stale}`);
    plan.env[c.variable] = c.dir;
    plan.waitReasons.push(`the ${preset.name} preset copies ${c.file} back when it exits`);
    plan.afterExit.push(() => {
      const r = copyBack(copied);
      if (r.kind === 'conflict') {
        fs.writeSync(2, `${plan.options.program}: ${c.file} changed outside while ${preset.command} ran: kept as it is; what ${preset.command} saved is in ${r.keptAt}\n`);
      }
    });
  }
  // Read-only config that is not there is simply not granted (it is not the user's -r).
  for (const p of preset.readable) if (fs.existsSync(p)) plan.options.read.push(p);
};

export const libraryWaitStep: ConfineStep = (plan) => {
  if (plan.waitReasons.length === 0) plan.waitReasons.push('called as a library');
};

/** The `none` jail: says loudly that nothing is confined, and runs the command as it is. */
export const noJailStep: ConfineStep = (plan) => {
  plan.warnings.push(NO_JAIL_WARNING);
  // The command is not sandboxed: telling Claude Code it is would make it skip its own checks.
  delete plan.env.CLAUDE_CODE_SANDBOXED;
  plan.waitReasons.push('--jail none');
  plan.runner = (p) => runAndWait(p, () => spawn(p.file, p.argv.slice(1), { argv0: p.argv[0], cwd: p.dir, env: p.env, stdio: 'inherit' }));
};

/**
 * The steps for a jail, from confine's (src/confine/run.ts STEPS): Landlock's as they are, with
 * the preset step; bwrap's without Landlock's own steps, with a first step that checks bwrap and
 * the mounts before anything is forked, and a last one that runs bwrap; none's with neither
 * Landlock nor the policy. Throws usage errors (bad --jail, --mount, --preset) before any step.
 */
export function jailSteps(options: ConfineOptions, steps: readonly NamedStep[], platform: NodeJS.Platform = process.platform): NamedStep[] {
  const byPreset = presetJail(options.flags, options.command, platform);
  // The rest of confine reads the jail from the flags (the hardening step among them).
  if (byPreset.jail) options.flags.jail = byPreset.jail;
  const choice = jailChoice(options.flags, platform);
  const out: NamedStep[] = [];
  if (byPreset.note || byPreset.warning) {
    out.push({
      name: 'preset-jail',
      run: (plan) => {
        if (byPreset.warning) plan.warnings.push(byPreset.warning);
        if (byPreset.note) plan.warnings.push(`using ${byPreset.note}`);
      },
    });
  }
  const drop = new Set<string>(
    choice.jail === 'bwrap' || choice.jail === 'seatbelt' ? ['landlock-abi', 'ruleset'] : choice.jail === 'none' ? ['landlock-abi', 'policy', 'ruleset'] : [],
  );
  if (choice.jail === 'bwrap') {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const bwrap = require('./bwrap') as typeof import('./bwrap');
    out.push({ name: 'bwrap-check', run: bwrap.bwrapCheckStep(choice.mounts) });
  }
  for (const step of steps) {
    if (drop.has(step.name)) continue;
    if (step.name === 'policy') out.push({ name: 'preset-paths', run: presetPathsStep });
    out.push(step);
    if (step.name === 'policy' && choice.jail === 'seatbelt') {
      // Before 'hardening', which then sees another jail's runner and adds no Linux layer.
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      const seatbelt = require('./seatbelt') as typeof import('./seatbelt');
      out.push({ name: 'seatbelt', run: seatbelt.seatbeltStep });
    }
    if (step.name === 'environment') out.push({ name: 'preset', run: presetStep });
    if (step.name === 'hardening' && choice.jail === 'bwrap') {
      // eslint-disable-next-line @typescript-eslint/no-var-requires
      const bwrap = require('./bwrap') as typeof import('./bwrap');
      out.push({ name: 'bwrap', run: bwrap.bwrapStep(choice.mounts) });
    }
    if (step.name === 'hardening' && choice.jail === 'none') out.push({ name: 'no-jail', run: noJailStep });
  }
  // Called as a library (src/index.ts): wait for the command, never become it, which would
  // replace the caller's process.
  if (options.flags.library === true) out.push({ name: 'library-wait', run: libraryWaitStep });
  return out;
}

export interface NamedStep {
  name: string;
  run: ConfineStep;
}

/** How a child ended. */
export interface Ended {
  status: number | null;
  /** The signal's number, or null. */
  signal: number | null;
}

/**
 * Starts the command and waits, as confine does in wait mode: the terminal's ^C and ^\ reach the
 * command's process group directly, so confine only outlives them; other signals sent to
 * confine alone are passed on. Runs the plan's beforeStart and afterExit hooks, and --rm.
 * `interpret` turns how the child ended into the status (default: its status, 128+N for a
 * signal N); if it throws, the command never ran, and the fork confine made is removed.
 */
export async function runAndWait(plan: ConfinePlan, start: () => ChildProcess, interpret?: (ended: Ended) => number): Promise<number> {
  let ended: Ended;
  let status: number;
  try {
    for (const f of plan.beforeStart) await f();
    ended = await new Promise<Ended>((resolve, reject) => {
      const child = start();
      const ignore = () => {};
      const forward = (sig: NodeJS.Signals) => () => {
        try {
          child.kill(sig);
        } catch {
          /* it has ended */
        }
      };
      const handlers: [NodeJS.Signals, () => void][] = [
        ['SIGINT', ignore],
        ['SIGQUIT', ignore],
        ['SIGTERM', forward('SIGTERM')],
        ['SIGHUP', forward('SIGHUP')],
        ['SIGUSR1', forward('SIGUSR1')],
        ['SIGUSR2', forward('SIGUSR2')],
      ];
      for (const [sig, h] of handlers) process.on(sig, h);
      const done = () => {
        for (const [sig, h] of handlers) process.removeListener(sig, h);
      };
      child.on('error', (err: NodeJS.ErrnoException) => {
        done();
        const file = child.spawnfile;
        reject(
          err.code === 'EACCES'
            ? new ArbError('ARB_COMMAND_NOT_EXECUTABLE', `${plan.options.command}: cannot run '${file}': permission denied (EACCES)`, { exitCode: 126, cause: err })
            : new ArbError('ARB_IO', `cannot run '${file}': ${err.message}`, { cause: err }),
        );
      });
      child.on('close', (code, signal) => {
        done();
        resolve({ status: code, signal: signal ? (os.constants.signals[signal] ?? 0) : null });
      });
    });
    status = interpret ? interpret(ended) : ended.signal !== null ? 128 + ended.signal : (ended.status ?? 1);
  } catch (err) {
    // The command never ran: leave nothing behind.
    if (plan.fork) removeForkOf(plan);
    throw err;
  }
  for (const f of plan.afterExit) await f(ended);
  if (plan.rm && plan.fork) {
    try {
      removeForkOf(plan);
      if (plan.options.verbose) fs.writeSync(2, `${plan.options.program}: removed ${plan.fork.fork} and ${plan.fork.base}\n`);
    } catch (err) {
      fs.writeSync(2, `${plan.options.program}: cannot remove the fork '${plan.fork.fork}': ${(err as Error).message}\n`);
    }
  }
  return status;
}

function removeForkOf(plan: ConfinePlan): void {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { removeFork } = require('./run') as typeof import('./run');
  if (plan.fork) removeFork(plan.fork);
}
