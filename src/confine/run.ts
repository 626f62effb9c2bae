// arb confine, from options to a running command, in two halves: buildPlan makes a ConfinePlan
// in steps (each a small function that reads the options and adds to the plan), and runPlan
// carries it out. Hardening (environment, namespaces, seccomp), other jails and the broker each
// add a step to STEPS rather than change the others.
//
// Two ways to run. Exec mode (the default): confine becomes the command, in one native call that
// applies Landlock and calls execve, so the command has confine's pid and its status is
// confine's. Wait mode (--rm, namespaces, the broker): a child is confined and exec'd, confine
// forwards signals, waits, cleans up and exits as the command did (128+N for signal N).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ArbError, systemError, usageError } from '../errors';
import * as native from '../native';
import type { LandlockSpec, NamespacePlanSpec, SeccompPlanSpec, WaitResult } from '../native';
import { LandlockRuleset, buildRuleset, readLandlockAbi, rightNames, scopeNames } from './landlock';
import { removeTree } from '../fork/remove';
import { Grant, Policy, buildPolicy, canRead, holdsHome, isInside, nodeFs, protectedHomes } from './policy';
import { environmentScrubStep, hardeningStep } from './hardening';
import { netOptionsStep } from './net/options';

/** What the command line asked for. */
export interface ConfineOptions {
  /** How messages are prefixed: "arb confine" or "confine". */
  program: string;
  command: string;
  args: string[];
  /** -d DIR: run in DIR itself, no fork. */
  dir?: string;
  /** -w PATH, -r PATH (as given; resolved against cwd). */
  write: string[];
  read: string[];
  /** -n NAME, --no-ignore: how the fork is made. */
  name?: string;
  noIgnore: boolean;
  rm: boolean;
  verbose: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Every option parsed, for steps that add their own (--no-network, --jail, …). */
  flags: Record<string, unknown>;
}

/** A fork confine made, as src/fork/fork.ts reports it. */
export interface ForkMade {
  source: string;
  fork: string;
  base: string;
}

export interface ConfinePlan {
  readonly options: ConfineOptions;
  /** The directory the command works in: the fork, or -d DIR (resolved). */
  dir: string;
  /** Set once confine has made a fork; removed again if a later step fails. */
  fork?: ForkMade;
  /** The program, resolved as execvp would (absolute), and its arguments (argv[0] as given). */
  file: string;
  argv: string[];
  /** The command's environment. */
  env: Record<string, string>;
  /** Variables kept in it even if they look secret (-e NAME, and presets: an agent's own key). */
  keepEnv: string[];
  /** The home directory `~` means ($HOME, else the user's), and every home to protect. */
  home: string;
  homes: string[];
  /** Writable paths steps add beyond the defaults and -w (e.g. the broker's socket directory). */
  extraWritable: { path: string; why: string; sockets?: boolean }[];
  /** What the command may read and write (policy step). */
  policy?: Policy;
  /** Landlock's ABI and the ruleset (ruleset step). */
  abi: number;
  landlock?: LandlockRuleset;
  /** Hardening layers, set by their steps; namespaces need wait mode. */
  namespaces?: NamespacePlanSpec;
  seccomp?: SeccompPlanSpec;
  /** --no-network: Landlock handles TCP too (where namespaces cannot take the network away). */
  denyNetwork: boolean;
  /** Descriptors the command keeps besides 0, 1, 2. */
  keepFds: number[];
  /** Why confine waits rather than becoming the command; empty: exec mode. */
  waitReasons: string[];
  rm: boolean;
  /** Lines -v prints before the command runs. */
  notes: string[];
  /** Lines printed on stderr whatever -v says. */
  warnings: string[];
  /** Wait mode: run before the child starts, and after it ends (before --rm removes the fork). */
  beforeStart: (() => Promise<void> | void)[];
  /** Wait mode, Landlock jail: run once the command has started (exec'd), with its pid. */
  afterStart: ((pid: number) => Promise<void> | void)[];
  afterExit: ((result: WaitResult) => Promise<void> | void)[];
  /** A jail other than Landlock runs the plan itself (--jail bwrap, none) and returns the status. */
  runner?: (plan: ConfinePlan) => Promise<number>;
}

export type ConfineStep = (plan: ConfinePlan) => void | Promise<void>;

// --- steps ------------------------------------------------------------------------------------

/** Landlock first: on a kernel that cannot confine, nothing is forked and nothing runs. */
export const landlockAbiStep: ConfineStep = (plan) => {
  plan.abi = readLandlockAbi(native.landlockAbi, plan.options.env);
};

/** The homes to protect: the user's (password database) and $HOME, when they differ. */
export const homesStep: ConfineStep = (plan) => {
  const envHome = plan.options.env.HOME;
  let userHome: string | undefined;
  try {
    userHome = os.userInfo().homedir;
  } catch {
    userHome = undefined;
  }
  const candidates = [userHome, envHome].filter((h): h is string => typeof h === 'string' && path.isAbsolute(h));
  if (candidates.length === 0) {
    throw new ArbError('ARB_UNSUPPORTED', 'cannot tell which directory is the home directory, so its secrets cannot be kept from the command', {
      hint: 'set HOME to your home directory',
    });
  }
  plan.home = envHome && path.isAbsolute(envHome) ? path.normalize(envHome) : (userHome as string);
  plan.homes = protectedHomes(candidates, nodeFs);
  if (plan.homes.includes('/')) {
    throw new ArbError('ARB_UNSUPPORTED', 'the home directory is /, so confine cannot keep it from the command and grant the rest', {
      hint: 'set HOME to a directory of its own',
    });
  }
};

/** -d DIR, or the working directory to fork; never one that holds a home directory. */
export const directoryStep: ConfineStep = (plan) => {
  const { options } = plan;
  const given = options.dir ?? options.cwd;
  const what = options.dir !== undefined ? `-d ${options.dir}` : 'the working directory';
  let real: string;
  try {
    real = fs.realpathSync.native(path.resolve(options.cwd, given));
  } catch (err) {
    throw systemError('use', given, err, options.dir !== undefined ? 'give an existing directory with -d' : undefined);
  }
  if (!fs.statSync(real).isDirectory()) {
    throw new ArbError('ARB_NOT_DIRECTORY', `${what} is not a directory: '${given}'`);
  }
  const home = holdsHome(real, plan.homes);
  if (home !== undefined) {
    const forking = options.dir === undefined;
    throw new ArbError(
      'ARB_USAGE',
      `${what} ${real === home ? 'is' : 'holds'} the home directory ${home}: ${forking ? 'a fork of it would hold' : 'the command would get'} every secret in it`,
      { hint: forking ? 'cd to a project directory first, or give one with -d' : 'give a project directory, and -r/-w for what else it needs', exitCode: 2 },
    );
  }
  plan.dir = real;
};

/** The environment the command gets: confine's, and CLAUDE_CODE_SANDBOXED=1. */
export const environmentStep: ConfineStep = (plan) => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(plan.options.env)) if (v !== undefined) env[k] = v;
  // Claude Code then trusts the directory without asking, which would write ~/.claude.json.
  env.CLAUDE_CODE_SANDBOXED = '1';
  plan.env = env;
};

/** 127/126 as a shell gives them, decided before anything is made. */
export const commandStep: ConfineStep = (plan) => {
  const found = resolveCommand(plan.options.command, plan.dir, plan.env.PATH);
  if ('error' in found) {
    throw new ArbError(found.error === 'not-found' ? 'ARB_COMMAND_NOT_FOUND' : 'ARB_COMMAND_NOT_EXECUTABLE', found.message, {
      exitCode: found.error === 'not-found' ? 127 : 126,
    });
  }
  plan.file = found.file;
  plan.argv = [plan.options.command, ...plan.options.args];
};

/** Forks the directory as `arb fork` does, unless -d; says where on stderr. */
export const forkStep: ConfineStep = async (plan) => {
  const { options } = plan;
  if (options.dir !== undefined) return;
  // Loaded only when forking: it brings the clone engine and private git.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const forkModule = require('../fork/fork') as typeof import('../fork/fork');
  const made = await forkModule.fork({
    dir: plan.dir,
    name: options.name,
    noIgnore: options.noIgnore,
    warn: (m) => say(plan, m),
    progress: true,
  });
  plan.fork = { source: made.source, fork: made.fork, base: made.base };
  plan.dir = fs.realpathSync.native(made.fork);
  say(plan, `forked ${made.source} to ${made.fork}`);
  // A relative command or PATH entry now means the fork.
  commandStep(plan);
};

/** What the command may read and write. */
export const policyStep: ConfineStep = (plan) => {
  const { options } = plan;
  // A ~ that reached us unexpanded (quoted, or after -w=) means the home directory, as in a shell.
  const abs = (p: string) => path.resolve(options.cwd, p === '~' ? plan.home : p.startsWith('~/') ? path.join(plan.home, p.slice(2)) : p);
  plan.policy = buildPolicy(
    {
      homes: plan.homes,
      home: plan.home,
      dir: plan.dir,
      pathVar: plan.env.PATH,
      tmpdir: plan.env.TMPDIR,
      readable: options.read.map(abs),
      writable: options.write.map(abs),
      extraWritable: plan.extraWritable,
    },
    nodeFs,
  );
  plan.warnings.push(...plan.policy.warnings);
  // A program (or a script's interpreter) in the home directory that is not granted would fail
  // at execve with EACCES; say why now, before it runs.
  const real = nodeFs.realpath(plan.file) ?? plan.file;
  const interpreter = interpreterOf(real);
  const realInterpreter = interpreter && (nodeFs.realpath(interpreter) ?? interpreter);
  for (const [what, p] of [
    ['it is', real],
    [`its interpreter ${interpreter} is`, realInterpreter],
  ] as const) {
    if (p && !canRead(p, plan.policy)) {
      throw new ArbError('ARB_COMMAND_NOT_EXECUTABLE', `${plan.options.command}: cannot run '${plan.file}' confined: ${what} in the home directory, which the command cannot read`, {
        exitCode: 126,
        hint: `give its directory with -r ${path.dirname(p)}`,
      });
    }
  }
};

/** The interpreter a script names on its #! line (absolute), if it has one. */
export function interpreterOf(file: string): string | undefined {
  let head: Buffer;
  try {
    const fd = fs.openSync(file, 'r');
    try {
      head = Buffer.alloc(256);
      head = head.subarray(0, fs.readSync(fd, head, 0, head.length, 0));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const m = /^#!\s*(\/\S+)/.exec(head.toString('latin1').split('\n')[0]);
  return m?.[1];
}

/** The Landlock ruleset from the grants. */
export const rulesetStep: ConfineStep = (plan) => {
  if (!plan.policy) throw new ArbError('ARB_INTERNAL', 'the ruleset step needs the policy step first');
  plan.landlock = buildRuleset(plan.policy.grants, plan.abi, { denyNetwork: plan.denyNetwork });
};

/** --rm waits for the command (and the steps above may have asked to wait too). */
export const waitStep: ConfineStep = (plan) => {
  if (plan.options.rm) {
    if (plan.options.dir !== undefined) throw usageError('--rm removes the fork confine makes; with -d there is none, and the directory is kept');
    plan.rm = true;
    plan.waitReasons.push('--rm');
  }
  if (plan.namespaces) plan.waitReasons.push('namespaces');
};

/**
 * The steps, in order. A step that needs another's result comes after it; a step added by
 * hardening, a jail or the broker goes where its comment says.
 */
export const STEPS: { name: string; run: ConfineStep }[] = [
  // --allow-host and --net-log checked first: a usage error before anything is made.
  { name: 'net-options', run: netOptionsStep },
  { name: 'landlock-abi', run: landlockAbiStep },
  { name: 'homes', run: homesStep },
  { name: 'directory', run: directoryStep },
  { name: 'environment', run: environmentStep },
  // Steps that change the environment (scrubbing, the broker's PATH) go here, before the
  // command is looked up on PATH.
  { name: 'scrub-environment', run: environmentScrubStep },
  { name: 'command', run: commandStep },
  { name: 'fork', run: forkStep },
  // Steps that add writable paths (plan.extraWritable) go here, before the policy.
  // The broker (asking to run gh outside): after the fork, whose git configuration it records.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  { name: 'broker', run: (plan) => (require('./broker/step') as typeof import('./broker/step')).brokerStep(plan) },
  { name: 'policy', run: policyStep },
  // Namespaces, seccomp and --no-network: before the ruleset, which reads plan.denyNetwork.
  { name: 'hardening', run: hardeningStep },
  { name: 'ruleset', run: rulesetStep },
  // --allow-host: the proxy, its port in the ruleset or the namespace plan, HTTPS_PROXY.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  { name: 'network', run: (plan) => (require('./net/step') as typeof import('./net/step')).networkStep(plan) },
  // Namespaces and seccomp (plan.namespaces, plan.seccomp) go here.
  { name: 'wait', run: waitStep },
];

export function emptyPlan(options: ConfineOptions): ConfinePlan {
  return {
    options,
    dir: options.cwd,
    file: '',
    argv: [],
    env: {},
    keepEnv: [],
    home: '',
    homes: [],
    extraWritable: [],
    abi: 0,
    denyNetwork: false,
    keepFds: [],
    waitReasons: [],
    rm: false,
    notes: [],
    warnings: [],
    beforeStart: [],
    afterStart: [],
    afterExit: [],
  };
}

/** Runs the steps; if one fails after a fork was made, the fork and its base are removed. */
export async function buildPlan(options: ConfineOptions, steps = STEPS): Promise<ConfinePlan> {
  const plan = emptyPlan(options);
  try {
    for (const step of steps) await step.run(plan);
  } catch (err) {
    if (plan.fork) removeFork(plan.fork);
    throw err;
  }
  return plan;
}

// --- the command ------------------------------------------------------------------------------

export type Resolved = { file: string } | { error: 'not-found' | 'not-executable'; message: string };

function runnable(file: string): 'yes' | 'missing' | 'not-runnable' {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return 'missing';
  }
  if (!st.isFile()) return 'not-runnable';
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return 'yes';
  } catch {
    return 'not-runnable';
  }
}

/**
 * Finds the program as execvp does: a name with a '/' is a path (relative to the directory the
 * command runs in); any other is looked up in each PATH entry in turn (an empty entry is the
 * directory; no PATH means /bin:/usr/bin), skipping entries where it is there but cannot be run.
 */
export function resolveCommand(command: string, dir: string, pathVar: string | undefined): Resolved {
  if (command === '') return { error: 'not-found', message: "'': command not found" };
  if (command.includes('/')) {
    const file = path.resolve(dir, command);
    const r = runnable(file);
    if (r === 'yes') return { file };
    if (r === 'missing') return { error: 'not-found', message: `${command}: no such file or directory` };
    const isDir = fs.statSync(file, { throwIfNoEntry: false })?.isDirectory();
    return { error: 'not-executable', message: `${command}: ${isDir ? 'is a directory' : 'permission denied: not an executable file'}` };
  }
  let sawUnrunnable: string | undefined;
  for (const entry of (pathVar ?? '/bin:/usr/bin').split(':')) {
    const file = path.resolve(dir, entry === '' ? '.' : entry, command);
    const r = runnable(file);
    if (r === 'yes') return { file };
    if (r === 'not-runnable' && sawUnrunnable === undefined) sawUnrunnable = file;
  }
  if (sawUnrunnable !== undefined) {
    return { error: 'not-executable', message: `${command}: permission denied: '${sawUnrunnable}' is not an executable file` };
  }
  return { error: 'not-found', message: `${command}: command not found` };
}

// --- running ----------------------------------------------------------------------------------

function say(plan: ConfinePlan, message: string): void {
  fs.writeSync(2, `${plan.options.program}: ${message}\n`);
}

function tilde(plan: ConfinePlan, p: string): string {
  return plan.home && isInside(p, plan.home) && p !== plan.home ? `~${p.slice(plan.home.length)}` : p;
}

/** What -v prints: the ABI, each grant and why, and how the command runs. */
export function describePlan(plan: ConfinePlan): string[] {
  const lines: string[] = [];
  const ll = plan.landlock;
  if (ll) {
    const scoped = scopeNames(ll.scoped);
    lines.push(
      `Landlock ABI ${plan.abi} enforced: every file-system right it knows is denied unless granted (${rightNames(ll.handledAccessFs).join(', ')})` +
        (scoped.length ? `; scoped: ${scoped.join(', ')}` : '; no scopes (ABI 6 needed): signals and abstract unix sockets are not confined') +
        (ll.handledAccessNet ? '; TCP denied' : ''),
    );
  }
  const grants = plan.policy?.grants ?? [];
  const width = Math.max(0, ...grants.map((g: Grant) => tilde(plan, g.path).length));
  for (const g of grants) {
    const shown = tilde(plan, g.path);
    const via = g.given ? ` (as ${tilde(plan, g.given)})` : '';
    lines.push(`  ${g.access.padEnd(5)} ${shown.padEnd(width)}  ${g.why}${via}`);
  }
  for (const s of plan.policy?.skipped ?? []) lines.push(`  skip  ${tilde(plan, s.path)}: ${s.why}`);
  lines.push(...plan.notes);
  const how = plan.waitReasons.length ? `waiting for it (${plan.waitReasons.join(', ')})` : 'as the command itself (execve)';
  lines.push(`running ${plan.file} in ${plan.dir}, ${how}`);
  return lines;
}

/** The spec the addon takes. */
export function landlockSpec(plan: ConfinePlan): LandlockSpec {
  const ll = plan.landlock;
  if (!ll) throw new ArbError('ARB_INTERNAL', 'no Landlock ruleset in the plan');
  return {
    abi: ll.abi,
    handledAccessFs: ll.handledAccessFs,
    handledAccessNet: ll.handledAccessNet,
    scoped: ll.scoped,
    rules: ll.rules,
    netRules: ll.netRules,
    file: plan.file,
    argv: plan.argv,
    env: Object.entries(plan.env).map(([k, v]) => `${k}=${v}`),
    cwd: plan.dir,
    keepFds: plan.keepFds,
    ...(plan.namespaces ? { namespaces: plan.namespaces } : {}),
    ...(plan.seccomp ? { seccomp: plan.seccomp } : {}),
  };
}

/** The error a failed exec or spawn becomes: 126 for execve (as a shell), 1 otherwise. */
function failureError(plan: ConfinePlan, err: unknown): ArbError {
  const e = err as native.ConfineFailure;
  if (e.syscall === 'execve') {
    const prefix = `cannot run '${plan.file}': `;
    const base = systemError('run', plan.file, err);
    const what = base.message.startsWith(prefix) ? base.message.slice(prefix.length) : base.message;
    const interpreter = interpreterOf(plan.file);
    const hint =
      e.code === 'EACCES'
        ? `Landlock kept the command from reading it${interpreter ? ` or its interpreter ${interpreter}` : ''}: give the directory with -r`
        : e.code === 'ENOENT' && interpreter
          ? `its interpreter ${interpreter} is missing, or hidden from the command`
          : base.hint;
    return new ArbError('ARB_COMMAND_NOT_EXECUTABLE', `${plan.options.command}: cannot run '${plan.file}' confined: ${what}`, { exitCode: 126, hint, cause: err });
  }
  const step = e.syscall ?? 'confine';
  const target = e.path ?? plan.dir;
  return systemError(step === 'open' || step === 'landlock_add_rule' ? `grant access to` : `set up the confinement (${step}) for`, target, err, 'nothing was run');
}

export function removeFork(made: ForkMade): void {
  removeTree(made.fork);
  removeTree(made.base);
}

/** Signals confine passes on to the command in wait mode. */
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGQUIT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'];

/**
 * A signal the terminal generates (Ctrl-C, Ctrl-\) goes to the whole foreground process group,
 * the command included: passing it on too would deliver it twice (and Claude Code exits on a
 * second Ctrl-C). So SIGINT and SIGQUIT are passed on only when confine's group is not the
 * terminal's foreground group, i.e. when someone sent them to confine alone.
 */
function fromTerminal(sig: NodeJS.Signals): boolean {
  if (sig !== 'SIGINT' && sig !== 'SIGQUIT') return false;
  const t = native.terminalForeground();
  return t.foreground >= 0 && t.foreground === t.pgrp;
}

/** Carries out the plan; resolves with confine's exit status (only in wait mode, or on error). */
export async function runPlan(plan: ConfinePlan): Promise<number> {
  for (const w of plan.warnings) say(plan, w);
  if (plan.options.verbose) for (const line of describePlan(plan)) say(plan, line);
  if (plan.runner) return plan.runner(plan);

  const spec = landlockSpec(plan);
  if (plan.waitReasons.length === 0) {
    try {
      native.landlockExec(spec);
    } catch (err) {
      // Once this thread is confined, nothing more is done here but report and exit (the fork
      // is kept: removing its base is no longer allowed).
      if ((err as native.ConfineFailure).confined) {
        say(plan, formatPlain(failureError(plan, err)));
        process.exit((err as native.ConfineFailure).syscall === 'execve' ? 126 : 1);
      }
      if (plan.fork) removeFork(plan.fork);
      throw failureError(plan, err);
    }
  }

  let pid = 0;
  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const sig of FORWARDED) {
    const h = () => {
      if (pid > 0 && !fromTerminal(sig)) {
        try {
          process.kill(pid, sig);
        } catch {
          /* it has already ended */
        }
      }
    };
    handlers.set(sig, h);
    process.on(sig, h);
  }
  try {
    try {
      for (const f of plan.beforeStart) await f();
      pid = native.landlockSpawn(spec);
      try {
        for (const f of plan.afterStart) await f(pid);
      } catch (err) {
        // What the command needs (the proxy) is not there: it does not run on without it.
        process.kill(pid, 'SIGKILL');
        await native.waitPid(pid);
        throw err;
      }
    } catch (err) {
      // The command never ran: leave nothing behind.
      if (plan.fork) removeFork(plan.fork);
      throw (err as native.ConfineFailure).syscall ? failureError(plan, err) : err;
    }
    const result = await native.waitPid(pid);
    for (const f of plan.afterExit) await f(result);
    if (plan.rm && plan.fork) {
      try {
        removeFork(plan.fork);
        if (plan.options.verbose) say(plan, `removed ${plan.fork.fork} and ${plan.fork.base}`);
      } catch (err) {
        say(plan, formatPlain(systemError('remove the fork', plan.fork.fork, err)));
      }
    }
    return result.signal !== null ? 128 + result.signal : (result.status ?? 1);
  } finally {
    for (const [sig, h] of handlers) process.removeListener(sig, h);
  }
}

function formatPlain(err: ArbError): string {
  return err.hint ? `${err.message}: ${err.hint}` : err.message;
}

/** The whole of arb confine: plan, then run. */
export async function confine(options: ConfineOptions): Promise<number> {
  // The jail (--jail, --mount, --preset: src/confine/jail.ts) decides which steps run.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { jailSteps } = require('./jail') as typeof import('./jail');
  const plan = await buildPlan(options, jailSteps(options, STEPS));
  return runPlan(plan);
}
