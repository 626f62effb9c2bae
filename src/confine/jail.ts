// Which jail confines the command: `--jail landlock` (Linux, the default), `seatbelt` (macOS, the
// default), `bwrap` (bubblewrap, Linux) or `none` (no isolation, said every time). Pure checks of
// the choice against the platform and the other options; each jail's plan is in
// src/confine/run.ts (landlockJail, bwrapJail, seatbeltJail, noJail).
import { usageError } from '../errors';
import type { MountSpec } from './mounts';
import type { Preset } from './presets';

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

/** What presetJail decided: the jail (when it chose one), and what confine says once. */
export interface PresetJail {
  jail?: JailName;
  said?: string;
  /** In the bwrap jail: why no Landlock is applied inside it (the agent's own sandbox mounts). */
  withoutLandlock?: string;
}

/**
 * The jail a preset runs its agent in when no --jail is given (Codex: bwrap, so that its own
 * bubblewrap sandbox nests; see presets.ts CODEX_NESTING), and what confine says about it once.
 * Landlock forbids mount(2) to every process it confines, so the bwrap jail applies none inside
 * for such an agent: its namespaces and read-only mount plan confine it (as they confine every
 * command there), and the agent's sandbox nests inside. Where bwrap is missing, or another jail
 * was named, the agent's own sandbox cannot start: said once, with how to run. Never a jail
 * turned off silently: what changes is said.
 */
export function presetJail(
  named: string | undefined,
  mounts: readonly MountSpec[],
  preset: Pick<Preset, 'command' | 'linuxJail'> | undefined,
  platform: NodeJS.Platform = process.platform,
  haveBwrap: () => boolean = bwrapInstalled,
): PresetJail {
  const want = preset?.linuxJail;
  if (!preset || !want || platform !== 'linux') return {};
  const howto = `run ${preset.command} with --sandbox danger-full-access to leave only confine's jail`;
  const without = `without Landlock inside: ${want.why}; the jail's namespaces and read-only mounts confine it, and its sandbox nests inside`;
  if (named === undefined && mounts.length === 0) {
    if (haveBwrap()) return { jail: want.jail, said: `using the ${want.jail} jail for ${preset.command}, ${without} (--jail landlock to not)`, withoutLandlock: want.why };
    return { said: `${want.why}, and bwrap is not installed for the bwrap jail, where it nests: its commands will fail (install bubblewrap, or ${howto})` };
  }
  if (named !== undefined && named !== want.jail && named !== 'none') {
    return { said: `${want.why}: in the ${named} jail its commands will fail (use --jail ${want.jail}, or ${howto})` };
  }
  if (named === want.jail) return { said: `the ${want.jail} jail for ${preset.command}, ${without}`, withoutLandlock: want.why };
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
