// arb confine, from request to running command, in one pass. confine() checks the request
// (usage errors before anything is made), then the plan of the chosen jail (landlockJail,
// bwrapJail, seatbeltJail, noJail: each an explicit list of the shared helpers below, in
// order), then runs it (runPlan).
//
// Two ways to run. Exec (the landlock jail's default): confine becomes the launcher
// (native/launcher/, src/confine/launch.ts), which applies namespaces, mounts, Landlock and
// seccomp and execs the command, so the command has confine's pid and its status is confine's.
// Wait (--rm, namespaces, the broker, the library, and every other jail): confine spawns the
// launcher (inside bwrap for --jail bwrap), sandbox-exec or the command, passes signals on,
// waits, cleans up and exits as the command did (128+N for signal N): src/confine/wait.ts.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { ArbError, systemError, usageError } from '../errors';
import * as native from '../native';
import type { NamespacePlanSpec, SeccompPlanSpec } from '../native';
import { removeTree } from '../fork/remove';
import { isInside } from '../paths/inside';
import { commonlyWritable } from '../paths/programs';
import { checkKeepName, describeEnvironment, filterEnvironment } from './environment';
import { Hardening, HardeningInput, Probes, ownTerminal, planHardening, startProbes } from './hardening';
import { JailName, NO_JAIL_WARNING, chooseJail, presetJail } from './jail';
import { LandlockRuleset, buildRuleset, netRights, readLandlockAbi, rightNames, scopeNames } from './landlock';
import type { FailureMessage, LaunchPlan, Launched } from './launch';
import { makeRunLaterDirs as makeRunLaterDirsIn, runLaterPaths } from './caches';
import { forkNeighbours, keepUnderRunPaths } from './mount-plan';
import { MountSpec, checkMountSources, parseMounts } from './mounts';
import { Grant, Policy, buildPolicy, canRead, ensureHomeCaches, holdsHome, nodeFs, packageOf, protectedHomes } from './policy';
import type { ResolvedPreset } from './presets';
import type { NetChoice } from './net/options';
import type { ConfineRequest } from './request';
import type { Ended, Started } from './wait';

export type { ConfineRequest } from './request';
/** The request, under the name the plan's field has (plan.options). */
export type ConfineOptions = ConfineRequest;

/** A fork confine made, as src/fork/fork.ts reports it. */
export interface ForkMade {
  source: string;
  fork: string;
  base: string;
}

export interface ConfinePlan {
  /** What was asked (src/confine/request.ts). */
  readonly options: ConfineRequest;
  /** The jail that runs the command (checked against the platform first). */
  jail: JailName;
  /** --mount, parsed (bwrap only). */
  mounts: MountSpec[];
  /** --allow-host and --net-log, parsed (src/confine/net/options.ts); undefined: network open. */
  net?: NetChoice;
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
  /** The preset that applies (--preset, or by the command's name). */
  preset?: ResolvedPreset;
  /** Writable paths helpers add beyond the defaults and -w (e.g. the broker's socket directory). */
  extraWritable: { path: string; why: string; sockets?: boolean }[];
  /** What the command may read and write. */
  policy?: Policy;
  /** Landlock's ABI and the ruleset (landlock and bwrap jails). */
  abi: number;
  landlock?: LandlockRuleset;
  /** The bwrap jail without Landlock inside, and why: a preset's agent whose own sandbox mounts
   *  (Codex's bubblewrap; jail.ts presetJail). */
  withoutLandlock?: string;
  /** What hardenLinux decided: namespaces and the mount plan, seccomp, the network. */
  hardening?: Hardening;
  /** Where the launcher finds the namespaces do not work: Landlock alone, as planned (launch.ts). */
  fallback?: import('./launch').Fallback;
  namespaces?: NamespacePlanSpec;
  seccomp?: SeccompPlanSpec;
  /** --no-network without a network namespace: Landlock handles TCP too. */
  denyNetwork: boolean;
  /** --allow-host: the proxy's port on 127.0.0.1 as the command reaches it; `inside`: the
   *  launcher makes that listener in the command's network namespace (src/confine/net/step.ts). */
  proxy?: { port: number; inside: boolean };
  /** Descriptors the command keeps besides 0, 1, 2. */
  keepFds: number[];
  /** Why confine waits rather than becoming the command; empty: exec. */
  waitReasons: string[];
  rm: boolean;
  /** Lines -v prints before the command runs. */
  notes: string[];
  /** Lines printed on stderr whatever -v says. */
  warnings: string[];
  /** Wait mode: run before the child starts, and after it ends (before --rm removes the fork). */
  beforeStart: (() => Promise<void> | void)[];
  /** Wait mode, the launcher's jails: run once the launcher reports the sandbox exists, with what
   *  it handed over (the proxy's listener); if one fails, the command is killed, never run. */
  afterStart: ((sandbox: { listener?: number }) => Promise<void> | void)[];
  afterExit: ((result: Ended) => Promise<void> | void)[];
  /** How a waiting jail runs the plan and returns the status (bwrap, seatbelt, none). */
  runner?: (plan: ConfinePlan) => Promise<number>;
}

/** A helper that adds to the plan (the broker's is one: src/confine/broker/step.ts). */
export type ConfineStep = (plan: ConfinePlan) => void | Promise<void>;

/** Planning to run, or to explain (--explain: nothing forked, started or run). */
export type PlanMode = 'run' | 'explain';

// --- confine ------------------------------------------------------------------------------------

/** The whole of arb confine: check, plan, run. */
export async function confine(request: ConfineRequest): Promise<number> {
  return runPlan(await planConfine(request, 'run'));
}

/**
 * The plan for a request: the usage errors first (nothing made), then the chosen jail's plan. If
 * a helper fails after a fork was made, the fork and its base are removed.
 */
export async function planConfine(request: ConfineRequest, mode: PlanMode, platform: NodeJS.Platform = process.platform): Promise<ConfinePlan> {
  const { jail, mounts, said, withoutLandlock, net } = checkRequest(request, platform);
  const plan = newPlan(request, jail, mounts);
  plan.warnings.push(...said);
  if (withoutLandlock) plan.withoutLandlock = withoutLandlock;
  plan.net = net;
  try {
    if (jail === 'landlock') await landlockJail(plan, mode);
    else if (jail === 'bwrap') await bwrapJail(plan, mode);
    else if (jail === 'seatbelt') await seatbeltJail(plan, mode);
    else await noJail(plan, mode);
  } catch (err) {
    if (plan.fork) removeFork(plan.fork);
    throw err;
  }
  return plan;
}

/**
 * Usage errors, before anything is made: the jail against the platform, --mount specs (and that
 * their sources exist), --preset, -e names, --rm with -d, --no-network where the jail cannot,
 * --allow-host and --net-log (parsed into the host rules). Also the jail a preset runs its agent
 * in when none is named (Codex: bwrap, so that its own sandbox nests), and what confine says
 * about that choice, once (`said`).
 */
export function checkRequest(
  request: ConfineRequest,
  platform: NodeJS.Platform = process.platform,
  haveBwrap?: () => boolean,
): { jail: JailName; mounts: MountSpec[]; said: string[]; withoutLandlock?: string; net?: NetChoice } {
  const mounts = parseMounts(request.mounts);
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const presets = require('./presets') as typeof import('./presets');
  // An unknown --preset is a usage error here.
  const preset = request.preset === 'none' ? undefined : request.preset !== undefined ? presets.getPreset(request.preset) : presets.presetForCommand(request.command);
  const byPreset = presetJail(request.jail, mounts, preset, platform, haveBwrap);
  const jail = byPreset.jail ?? chooseJail(request.jail, mounts, platform);
  for (const name of request.keepEnv) {
    const bad = checkKeepName(name);
    if (bad) throw usageError(bad);
  }
  if (request.rm && request.dir !== undefined) throw usageError('--rm removes the fork confine makes; with -d there is none, and the directory is kept');
  if (request.noNetwork && jail !== 'landlock' && jail !== 'bwrap') throw usageError(`--no-network needs the landlock or bwrap jail (given: --jail ${jail})`);
  // --allow-host and --net-log: loaded only when given (host rules bring node:net).
  const net =
    request.allowHost.length > 0 || request.netLog !== undefined
      ? // eslint-disable-next-line @typescript-eslint/no-var-requires
        (require('./net/options') as typeof import('./net/options')).netChoice(request, jail, platform)
      : undefined;
  return {
    jail,
    mounts,
    said: byPreset.said ? [byPreset.said] : [],
    ...(jail === 'bwrap' && byPreset.withoutLandlock ? { withoutLandlock: byPreset.withoutLandlock } : {}),
    ...(net ? { net } : {}),
  };
}

function newPlan(options: ConfineRequest, jail: JailName, mounts: MountSpec[]): ConfinePlan {
  return {
    options,
    jail,
    mounts,
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

// --- the jails: each one's plan, in order --------------------------------------------------------

/**
 * --jail landlock (Linux's default): the launcher makes the namespaces and the mount plan,
 * restricts itself with Landlock and seccomp, and execs the command.
 */
export async function landlockJail(plan: ConfinePlan, mode: PlanMode): Promise<void> {
  // Landlock first: on a kernel that cannot confine, nothing is forked and nothing runs.
  plan.abi = readLandlockAbi(native.landlockAbi, plan.options.env);
  // --explain asks the kernel now whether the namespaces work (the launcher tries them while
  // confine plans the rest). To run, the launcher asks it itself, just before it makes them
  // (a fork of its own, cheap), and falls back to what hardenLinux planned for Landlock alone.
  // With --allow-host confine asks now too: the proxy is reached another way without them.
  const probes = mode === 'explain' || plan.net ? startProbes(probeInput(plan)) : undefined;
  probes?.catch(() => {});
  await commonPlan(plan, mode);
  if (mode === 'run') makeHomeCaches(plan);
  grantPresetPaths(plan, mode);
  makePolicy(plan);
  if (mode === 'run') makeRunLaterDirs(plan);
  hardenLinux(plan, probes ? await probes : undefined);
  makeRuleset(plan);
  await filterNetwork(plan, mode);
  decideWait(plan);
}

/**
 * --jail bwrap: bubblewrap makes the namespaces from the same mount plan, and runs the launcher,
 * which applies the same Landlock ruleset and seccomp filter inside before it execs the command.
 */
export async function bwrapJail(plan: ConfinePlan, mode: PlanMode): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const bwrap = require('./bwrap') as typeof import('./bwrap');
  // bwrap is there and every --mount source exists, before anything is forked. A missing bwrap
  // is an error naming the package, never a reason to run the command without the jail.
  bwrap.findBwrap(process.env.PATH);
  checkMountSources(plan.mounts);
  plan.abi = readLandlockAbi(native.landlockAbi, plan.options.env);
  await commonPlan(plan, mode);
  if (mode === 'run') makeHomeCaches(plan);
  grantPresetPaths(plan, mode);
  makePolicy(plan);
  // bwrap runs outside, as the user: never one found where the command may write (issue 13).
  const program = bwrap.findBwrap(process.env.PATH, undefined, writableByCommand(plan));
  if (mode === 'run') makeRunLaterDirs(plan);
  // bubblewrap makes the namespaces (nothing to probe); seccomp is asked.
  hardenLinux(plan, { namespaces: () => ({ ok: true }), seccomp: () => native.seccompAvailable() });
  if (plan.withoutLandlock) plan.notes.push(`no Landlock inside the bwrap jail: ${plan.withoutLandlock}`);
  else {
    makeRuleset(plan);
    // What the user mounted, Landlock lets the command use as asked.
    plan.landlock?.rules.push(...bwrap.mountRules(plan.mounts, plan.abi));
  }
  runUnderBwrap(plan, program);
  await filterNetwork(plan, mode);
  decideWait(plan);
}

/** --jail seatbelt (macOS's default): sandbox-exec with a profile made from the same grants. */
export async function seatbeltJail(plan: ConfinePlan, mode: PlanMode): Promise<void> {
  await commonPlan(plan, mode);
  if (mode === 'run') makeHomeCaches(plan);
  grantPresetPaths(plan, mode);
  makePolicy(plan);
  // The proxy first: the profile names its port.
  await filterNetwork(plan, mode);
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  (require('./seatbelt') as typeof import('./seatbelt')).seatbeltStep(plan);
  decideWait(plan);
}

/** --jail none: no isolation, said loudly; the command runs as it is, in the fork. */
export async function noJail(plan: ConfinePlan, mode: PlanMode): Promise<void> {
  await commonPlan(plan, mode);
  plan.warnings.push(NO_JAIL_WARNING);
  // The command is not sandboxed: telling Claude Code it is would make it skip its own checks.
  delete plan.env.CLAUDE_CODE_SANDBOXED;
  plan.waitReasons.push('--jail none');
  plan.runner = (p) => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { runAndWait, waitable } = require('./wait') as typeof import('./wait');
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { spawn } = require('node:child_process') as typeof import('node:child_process');
    return runAndWait(waitable(p), () => spawn(p.file, p.argv.slice(1), { argv0: p.argv[0], cwd: p.dir, env: p.env, stdio: 'inherit' }));
  };
  decideWait(plan);
}

/**
 * What every jail does first, in order: the homes to protect, the directory, the environment
 * (with the preset's and -e's variables kept), the command (127/126 before anything is made),
 * the fork, and the broker (which records the fork's git configuration, and changes PATH).
 */
async function commonPlan(plan: ConfinePlan, mode: PlanMode): Promise<void> {
  findHomes(plan);
  chooseDirectory(plan);
  warnSensitiveGrants(plan);
  makeEnvironment(plan);
  choosePreset(plan);
  scrubEnvironment(plan);
  if (mode === 'run' || plan.options.command !== '') findCommand(plan);
  if (mode === 'explain') return;
  await makeFork(plan);
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  await (require('./broker/step') as typeof import('./broker/step')).brokerStep(plan);
}

// --- the helpers, in the order the jails call them -----------------------------------------------

/** The homes to protect: the user's (password database) and $HOME, when they differ. */
export function findHomes(plan: ConfinePlan): void {
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
}

/** -d DIR, or the working directory to fork; never one that holds a home directory. */
export function chooseDirectory(plan: ConfinePlan): void {
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
}

/** Places whose grant gives away what confine exists to keep: said on stderr when -w, -r or -d names one. */
const SENSITIVE: readonly { rel: string; what: string }[] = [
  { rel: '.ssh', what: 'your SSH keys' },
  { rel: '.gnupg', what: 'your GnuPG keys and the socket of gpg-agent, which signs and decrypts with them' },
  { rel: '.aws', what: 'your AWS credentials' },
];

/**
 * -w, -r or -d of ~/.ssh, ~/.gnupg, ~/.aws or $XDG_RUNTIME_DIR (or a path in or around one) is
 * the user's choice, but one that hands the command what confine keeps from it: said every time.
 */
export function warnSensitiveGrants(plan: ConfinePlan): void {
  const { options } = plan;
  const abs = (p: string) => {
    const full = path.resolve(options.cwd, p === '~' ? plan.home : p.startsWith('~/') ? path.join(plan.home, p.slice(2)) : p);
    return nodeFs.realpath(full) ?? full;
  };
  const places: { path: string; what: string }[] = [];
  for (const h of plan.homes) for (const s of SENSITIVE) places.push({ path: path.join(h, s.rel), what: s.what });
  const runtime = options.env.XDG_RUNTIME_DIR;
  if (runtime && path.isAbsolute(runtime)) {
    places.push({ path: nodeFs.realpath(runtime) ?? runtime, what: 'the sockets of your session (D-Bus, gpg-agent, systemd --user), through which a program can run anything outside confine' });
  }
  const given: [string, string, string][] = [
    ...options.write.map((p): [string, string, string] => ['-w', p, 'read and change']),
    ...options.read.map((p): [string, string, string] => ['-r', p, 'read']),
    ...(options.dir !== undefined ? [['-d', options.dir, 'read and change'] as [string, string, string]] : []),
  ];
  for (const [flag, p, can] of given) {
    const a = abs(p);
    for (const place of places) {
      if (isInside(a, place.path, 'lexical') || isInside(place.path, a, 'lexical')) {
        plan.warnings.push(`${flag} ${p}: the command can ${can} ${place.what} (${place.path}); only grant it if you trust the command with them`);
      }
    }
  }
}

/** The environment the command gets: confine's, and CLAUDE_CODE_SANDBOXED=1. */
export function makeEnvironment(plan: ConfinePlan): void {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(plan.options.env)) if (v !== undefined) env[k] = v;
  // Claude Code then trusts the directory without asking, which would write ~/.claude.json.
  env.CLAUDE_CODE_SANDBOXED = '1';
  plan.env = env;
  workingDirectoryEnv(plan);
}

/**
 * PWD names the directory the command runs in (the fork, not the directory confine was started
 * in: opencode and shells trust it over getcwd), and OLDPWD, the caller's previous directory,
 * goes. Said again once the fork is made.
 */
function workingDirectoryEnv(plan: ConfinePlan): void {
  plan.env.PWD = plan.dir;
  delete plan.env.OLDPWD;
}

/**
 * The preset (--preset, or the one named like the command): the agent's own key is kept, and
 * confine says what it grants.
 */
export function choosePreset(plan: ConfinePlan): void {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const presets = require('./presets') as typeof import('./presets');
  const preset = presets.choosePreset(plan.options.preset, plan.options.command, plan.home, plan.env);
  if (!preset) return;
  plan.preset = preset;
  // Only the keys that are set: -v would otherwise list every provider opencode knows.
  plan.keepEnv.push(...preset.keepEnv.filter((v) => plan.env[v] !== undefined));
  plan.warnings.push(presets.presetNote(preset, plan.home, plan.env));
}

/**
 * Variables that look secret leave the command's environment, but those named with -e NAME and
 * those the preset keeps. -v says which went.
 */
export function scrubEnvironment(plan: ConfinePlan): void {
  const result = filterEnvironment(plan.env, [...plan.options.keepEnv, ...plan.keepEnv]);
  plan.env = result.env;
  plan.notes.push(...describeEnvironment(result));
}

/** 127/126 as a shell gives them, decided before anything is made. */
export function findCommand(plan: ConfinePlan): void {
  const found = resolveCommand(plan.options.command, plan.dir, plan.env.PATH);
  if ('error' in found) {
    throw new ArbError(found.error === 'not-found' ? 'ARB_COMMAND_NOT_FOUND' : 'ARB_COMMAND_NOT_EXECUTABLE', found.message, {
      exitCode: found.error === 'not-found' ? 127 : 126,
    });
  }
  plan.file = found.file;
  plan.argv = [plan.options.command, ...plan.options.args];
}

/** The broker calls it again once it changed PATH. */
export const commandStep: ConfineStep = (plan) => findCommand(plan);

/** Forks the directory as `arb fork` does, unless -d; says where on stderr. */
export async function makeFork(plan: ConfinePlan): Promise<void> {
  const { options } = plan;
  if (options.dir !== undefined) return;
  // Loaded only when forking: it brings the clone engine and private git.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const forkModule = require('../fork/fork') as typeof import('../fork/fork');
  // The git that forking runs is never one a command could have put in a -w path (issue 13).
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  (require('../git/private-git') as typeof import('../git/private-git')).trustGitOutside(options.write.map((w) => path.resolve(options.cwd, w)));
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
  workingDirectoryEnv(plan);
  // A relative command or PATH entry now means the fork.
  findCommand(plan);
}

/**
 * The default caches a new user has not made yet (~/.npm, ~/.cache, ~/.cargo, ~/.rustup), made
 * empty (mode 0700) before the policy, which grants only what exists: else a first `npm install`
 * fails. What runs later from them (~/.cargo/bin, ~/.npm/_npx: src/confine/caches.ts) is made
 * after the policy and kept read-only all the same (makeRunLaterDirs).
 */
export function makeHomeCaches(plan: ConfinePlan): void {
  for (const d of ensureHomeCaches(plan.home)) plan.notes.push(`made ${d} (empty, mode 0700), to grant it: a cache`);
}

/**
 * Once the command was found and the fork made: the preset's directories are made if missing (a
 * jail grants only what exists, and an agent run for the first time must keep its state), then
 * granted. A state file in the home directory itself (Claude Code's ~/.claude.json) goes through
 * a copy in the agent's directory: copied in before the command starts, back after it exits
 * (src/confine/state-copy.ts), so confine waits for it.
 */
export function grantPresetPaths(plan: ConfinePlan, mode: PlanMode): void {
  const preset = plan.preset;
  if (!preset) return;
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const presets = require('./presets') as typeof import('./presets');
  presets.ensurePresetDirs(preset, plan.home);
  for (const p of preset.writable) {
    // `…?` paths are granted only where they exist (opencode's installer directory).
    if (preset.ifExists.includes(p) && !fs.existsSync(p)) continue;
    plan.extraWritable.push({ path: p, why: `the ${preset.name} preset: its state` });
  }
  const c = preset.copiedFile;
  if (c && plan.jail === 'seatbelt') {
    // Seatbelt denies making the lock and temporary file with EPERM, and Claude Code then writes
    // in place; and CLAUDE_CONFIG_DIR would change its keychain entry there. So the file itself.
    if (fs.existsSync(c.file)) plan.extraWritable.push({ path: c.file, why: `the ${preset.name} preset: its state` });
  } else if (c) {
    plan.env[c.variable] = c.dir;
    plan.waitReasons.push(`the ${preset.name} preset copies ${c.file} back when it exits`);
    // --explain runs nothing, so copies nothing either.
    if (mode === 'run') copyStateFile(plan, c, preset.command);
  }
  // Read-only config that is not there is simply not granted (it is not the user's -r).
  for (const p of preset.readable) if (fs.existsSync(p)) plan.options.read.push(p);
}

/**
 * Where the command may write (its directory, -w paths, the policy's writable grants) and what
 * any command may write (/tmp, $TMPDIR, caches): a program arb runs outside, as the user, is never
 * taken from there (src/paths/programs.ts).
 */
export function writableByCommand(plan: ConfinePlan): string[] {
  const given = plan.options.write.map((w) => path.resolve(plan.options.cwd, w));
  const grants = (plan.policy?.grants ?? []).filter((g) => g.access === 'write').map((g) => g.path);
  return [plan.dir, ...given, ...plan.extraWritable.map((e) => e.path), ...grants, ...commonlyWritable(plan.options.env, plan.home)];
}

/** The copy in, just before the command starts, and back once it ended (wait.ts runs both). */
function copyStateFile(plan: ConfinePlan, c: NonNullable<ResolvedPreset['copiedFile']>, command: string): void {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { copyIn, copyBack } = require('./state-copy') as typeof import('./state-copy');
  let copied: ReturnType<typeof copyIn> | undefined;
  plan.beforeStart.push(() => {
    copied = copyIn(c.file, path.join(c.dir, path.basename(c.file)));
    if (copied.stale) say(plan, `a copy of ${c.file} that an earlier run did not copy back is kept in ${copied.stale}`);
  });
  plan.afterExit.push(() => {
    if (!copied) return;
    const r = copyBack(copied);
    if (r.kind === 'conflict') say(plan, `${c.file} changed outside while ${command} ran: kept as it is; what ${command} saved is in ${r.keptAt}`);
  });
}

/** What the command may read and write. */
export function makePolicy(plan: ConfinePlan): void {
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
        hint: `give the folder it belongs to with -r ${hintFolder(p, plan.policy.homes)}`,
      });
    }
  }
}

/** What to give with -r for a program in the home directory: its package (npm's, a venv), else
 *  its directory. */
function hintFolder(file: string, homes: readonly string[]): string {
  const home = homes.find((h) => isInside(file, h, 'lexical'));
  if (home === undefined) return path.dirname(file);
  const pkg = packageOf(file, home, nodeFs);
  return pkg === file ? path.dirname(file) : pkg;
}

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

/**
 * The directories of the caches table (src/confine/caches.ts) that do not exist yet are made,
 * empty, inside the writable caches, so the mount plan can keep them read-only.
 */
export function makeRunLaterDirs(plan: ConfinePlan): void {
  if (!plan.policy) throw new ArbError('ARB_INTERNAL', 'making the caches\' directories needs the policy first');
  const writable = plan.policy.grants.filter((g) => g.access === 'write').map((g) => g.path);
  const made = makeRunLaterDirsIn(runLaterPaths(plan.homes, plan.options.env), writable, plan.dir);
  for (const d of made) plan.notes.push(`made ${d} (empty), to keep it read-only: what runs later from a cache`);
}

/**
 * Namespaces and the mount plan, seccomp and --no-network, for both Linux jails (before the
 * ruleset, which reads plan.denyNetwork). Landlock alone is said once on stderr; the details go
 * to -v.
 */
export function hardenLinux(plan: ConfinePlan, probes?: Probes): void {
  if (!plan.policy) throw new ArbError('ARB_INTERNAL', 'the hardening needs the policy first');
  const input: HardeningInput = {
    jail: plan.jail === 'bwrap' ? 'bwrap' : 'landlock',
    grants: plan.policy.grants,
    homes: plan.homes,
    env: plan.options.env,
    // --allow-host asks for the network namespace too: its proxy is then the only way out.
    noNetwork: plan.options.noNetwork || plan.net !== undefined,
    networkOption: plan.net ? '--allow-host' : undefined,
    landlockOnly: plan.options.landlockOnly,
    abi: plan.abi,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    terminal: ownTerminal(),
    dir: plan.dir,
    neighbours: plan.fork ? forkNeighbours(plan.fork) : undefined,
    keepUnderRun: keepUnderRunPaths(),
    runLater: runLaterPaths(plan.homes, plan.options.env),
  };
  const seccomp = probes?.seccomp() ?? native.seccompAvailable();
  const h = planHardening(input, probes ?? { namespaces: () => ({ ok: true }), seccomp: () => seccomp });
  plan.hardening = h;
  // Under bwrap the namespaces are bubblewrap's: the launcher inside makes none.
  plan.namespaces = plan.jail === 'bwrap' ? undefined : h.namespaces;
  plan.seccomp = h.seccomp;
  if (h.landlockNet !== 0n) plan.denyNetwork = true;
  plan.warnings.push(...h.warnings);
  plan.notes.push(...h.details);
  if (!probes && plan.namespaces) {
    // What the launcher does where it finds the namespaces do not work: Landlock alone, as
    // planned here with the failure's facts left for the launcher to fill in.
    const failing: Probes = { namespaces: () => ({ ok: false, syscall: '{syscall}', path: '{path}', code: '{errno}' }), seccomp: () => seccomp };
    try {
      const alone = planHardening(input, failing);
      plan.fallback = {
        handledAccessNet: alone.landlockNet !== 0n ? netRights(plan.abi) : 0n,
        denyNetwork: alone.seccomp?.denyNetwork ?? false,
        text: alone.warnings.map((w) => `${plan.options.program}: ${w}`).join('\n'),
      };
    } catch (err) {
      if (!(err instanceof ArbError)) throw err;
      plan.fallback = {
        handledAccessNet: 0n,
        denyNetwork: false,
        text: `${plan.options.program}: ${formatPlain(err)}`,
        refuse: true,
      };
    }
  }
}

/** What the probes depend on, known before anything is made. */
function probeInput(plan: ConfinePlan): Parameters<typeof startProbes>[0] {
  return { env: plan.options.env, landlockOnly: plan.options.landlockOnly, noNetwork: plan.options.noNetwork || plan.net !== undefined, uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

/** The Landlock ruleset from the grants. */
export function makeRuleset(plan: ConfinePlan): void {
  if (!plan.policy) throw new ArbError('ARB_INTERNAL', 'the ruleset needs the policy first');
  plan.landlock = buildRuleset(plan.policy.grants, plan.abi, { denyNetwork: plan.denyNetwork });
}

/**
 * --allow-host: confine's proxy, the command's only way out (src/confine/net/step.ts), where the
 * jail can hold it to it (refused where not); --explain only asks whether it could.
 */
async function filterNetwork(plan: ConfinePlan, mode: PlanMode): Promise<void> {
  if (!plan.net) return;
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const step = require('./net/step') as typeof import('./net/step');
  if (mode === 'explain') step.proxyMode(plan);
  else await step.networkStep(plan);
}

/** The bwrap jail's runner: bwrap, with the mount plan, running the launcher. */
function runUnderBwrap(plan: ConfinePlan, program: string): void {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const bwrap = require('./bwrap') as typeof import('./bwrap');
  if (!plan.hardening) throw new ArbError('ARB_INTERNAL', 'the bwrap jail needs the hardening first');
  const launcher = native.launcherPath();
  const shape = { mounts: plan.hardening.mounts, userMounts: plan.mounts };
  let real = plan.file;
  try {
    real = fs.realpathSync(plan.file);
  } catch {
    /* resolved already; keep the name */
  }
  for (const f of new Set([plan.file, real])) {
    if (!bwrap.visibleInJail(f, shape)) {
      throw new ArbError('ARB_COMMAND_NOT_EXECUTABLE', `${plan.options.command}: cannot run '${f}' in the bwrap jail: it is in a directory the jail hides (the home directory, /tmp or /run)`, {
        exitCode: 126,
        hint: `give its directory with -r ${path.dirname(f)}, or --mount ro:${path.dirname(f)}`,
      });
    }
  }
  const args = (launcherArgv: string[]) =>
    bwrap.bwrapArgs({
      dir: plan.dir,
      homes: plan.homes,
      ...shape,
      root: bwrap.rootEntries(),
      // --no-network, and --allow-host (the launcher makes the proxy's listener in it).
      shareNetwork: !plan.options.noNetwork && !plan.net,
      bindFiles: [launcher],
      file: launcherArgv[0],
      args: launcherArgv.slice(1),
      statusFd: bwrap.STATUS_FD,
    });
  plan.waitReasons.push('the bwrap jail');
  plan.notes.push(`bwrap jail: ${[program, ...args([launcher, '--plan-fd', '4', '--report-fd', '5'])].map(bwrap.shellQuote).join(' ')}`);
  plan.runner = (p) => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { runAndWait, waitable } = require('./wait') as typeof import('./wait');
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const launch = require('./launch') as typeof import('./launch');
    let status = '';
    return runAndWait(
      waitable(p),
      () => {
        const started = launch.spawnLauncher(launchPlanOf(p), { wrap: { file: program, fds: 1, args } });
        started.wrapperFds[0]?.on('data', (chunk: Buffer) => {
          status += chunk.toString('utf8');
        });
        return afterStarted(p, started);
      },
      {
        failure: (err) => failureError(p, err),
        interpret: (ended) => {
          // bwrap reports the command's exit on its status descriptor; without that report it
          // failed to set up the jail or to start the command, and has said why on stderr.
          const exit = bwrap.exitCodeFromStatus(status);
          if (exit !== undefined) return exit;
          if (ended.signal !== null) return 128 + ended.signal;
          const hints = [
            'if it says user namespaces are not permitted, allow them (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap on Ubuntu 24.04) or use --jail landlock',
          ];
          if (p.mounts.length > 0) {
            hints.push('if it cannot make a --mount destination, give one that exists, or one directly under /, /tmp or the home directory (the rest of the host is read-only)');
          }
          throw new ArbError('ARB_UNSUPPORTED', `bubblewrap could not set up the jail or start the command (bwrap exited ${ended.status}; its message is above)`, {
            exitCode: ended.status === 0 || ended.status === null ? 1 : ended.status,
            hint: hints.join('; '),
          });
        },
      },
    );
  };
}

/**
 * Whether confine waits: --rm, the library (and the broker and the other jails, which said so);
 * else it execs the launcher. With namespaces too: the launcher's own process then stays outside
 * them as their reaper, passes signals on and exits as the command did.
 */
export function decideWait(plan: ConfinePlan): void {
  if (plan.options.rm) {
    plan.rm = true;
    plan.waitReasons.push('--rm');
  }
  // Called as a library (src/index.ts): wait for the command, never become it, which would
  // replace the caller's process.
  if (plan.options.wait && plan.waitReasons.length === 0) plan.waitReasons.push('called as a library');
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
  return plan.home && isInside(p, plan.home, 'lexical') && p !== plan.home ? `~${p.slice(plan.home.length)}` : p;
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
  const how = plan.waitReasons.length
    ? `waiting for it (${plan.waitReasons.join(', ')})`
    : plan.namespaces
      ? 'confine becoming its launcher (execve), which stays outside the namespaces as their reaper'
      : 'as the command itself (execve)';
  lines.push(`running ${plan.file} in ${plan.dir}, ${how}`);
  return lines;
}

/** What the launcher (src/confine/launch.ts) is asked to do for the Landlock jail. */
export function launchPlanOf(plan: ConfinePlan): LaunchPlan {
  if (!plan.landlock && !plan.withoutLandlock) throw new ArbError('ARB_INTERNAL', 'no Landlock ruleset in the plan');
  return {
    cwd: plan.dir,
    file: plan.file,
    argv: plan.argv,
    env: plan.env,
    keepFds: plan.keepFds,
    landlock: plan.landlock,
    namespaces: plan.namespaces,
    seccomp: plan.seccomp,
    fallback: plan.fallback,
    proxyListen: plan.proxy?.inside ? plan.proxy.port : undefined,
  };
}

/**
 * What the launcher says if a step fails once confine has become it (nobody else is left to say
 * it): the messages failureError gives, for the errors execve commonly meets, and one for any
 * other step, with the launcher filling in the step, errno and path.
 */
export function failureMessages(plan: ConfinePlan): FailureMessage[] {
  const fake = (syscall: string, code: string, p?: string) => Object.assign(new Error(`${syscall} failed`), { syscall, code, path: p });
  const out: FailureMessage[] = [];
  for (const code of ['ENOENT', 'EACCES', 'EPERM', 'ENOEXEC', 'ETXTBSY', 'ELOOP', 'ENOTDIR', 'EISDIR', 'E2BIG', 'ENOMEM']) {
    const e = failureError(plan, fake('execve', code, plan.file));
    out.push({ syscall: 'execve', errno: code, exitCode: e.exitCode, text: `${plan.options.program}: ${formatPlain(e)}` });
  }
  const program = plan.options.program;
  out.push({ syscall: 'execve', errno: '*', exitCode: 126, text: `${program}: ${plan.options.command}: cannot run '${plan.file}' confined: {errno}` });
  for (const syscall of ['open', 'landlock_add_rule']) {
    out.push({ syscall, errno: '*', exitCode: 1, text: `${program}: cannot grant access to '{path}': {errno} ({syscall}): nothing was run` });
  }
  out.push({ syscall: '*', errno: '*', exitCode: 1, text: `${program}: cannot set up the confinement ({syscall}) for '{path}': {errno}: nothing was run` });
  return out;
}

/** The error a failed exec or spawn becomes: 126 for execve (as a shell), 1 otherwise. */
function failureError(plan: ConfinePlan, err: unknown): ArbError {
  // Confine's own (an afterStart hook's), already said as it should be.
  if (err instanceof ArbError) return err;
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

/** Carries out the plan; resolves with confine's exit status (only when waiting, or on error). */
export async function runPlan(plan: ConfinePlan): Promise<number> {
  for (const w of plan.warnings) say(plan, w);
  if (plan.options.verbose) for (const line of describePlan(plan)) say(plan, line);
  if (plan.runner) return plan.runner(plan);

  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const launch = require('./launch') as typeof import('./launch');
  const spec = launchPlanOf(plan);
  if (plan.waitReasons.length === 0) {
    try {
      launch.execLauncher({ ...spec, messages: failureMessages(plan) });
    } catch (err) {
      // The launcher could not be run: nothing was applied, nothing ran.
      if (plan.fork) removeFork(plan.fork);
      throw (err as native.ConfineFailure).syscall ? systemError('run', (err as native.ConfineFailure).path ?? 'arb-launcher', err, 'nothing was run') : err;
    }
  }
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { runAndWait, waitable } = require('./wait') as typeof import('./wait');
  // Waiting without a PID namespace: the launcher stays as the command's parent and ends what
  // it leaves running, as the namespace's init does.
  return runAndWait(waitable(plan), () => afterStarted(plan, launch.spawnLauncher({ ...spec, reap: true })), { failure: (err) => failureError(plan, err) });
}

/**
 * The launcher as runAndWait waits for it, with the plan's afterStart hooks run once it reports
 * the sandbox exists (with --allow-host: when it hands over the proxy's listener, made inside);
 * if a hook fails, the command is killed and counts as never run.
 */
function afterStarted(plan: ConfinePlan, launched: Launched): Started {
  if (plan.afterStart.length === 0) return launched;
  const started = (async () => {
    const listener = launched.listener ? await launched.listener : undefined;
    // No listener: the launcher failed first (its report says why) or was killed.
    if (launched.listener && listener === undefined) await launched.started;
    try {
      for (const f of plan.afterStart) await f({ listener });
    } catch (err) {
      launched.child.kill('SIGKILL');
      throw err;
    }
    await launched.started;
  })();
  started.catch(() => {});
  return { child: launched.child, started };
}

function formatPlain(err: ArbError): string {
  return err.hint ? `${err.message}: ${err.hint}` : err.message;
}
