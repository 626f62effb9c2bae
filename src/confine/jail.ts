// Which jail confines the command: `--jail landlock` (Linux, the default), `seatbelt` (macOS, the
// default), `bwrap` (bubblewrap, Linux) or `none` (no isolation, said every time). Pure checks of
// the choice against the platform and the other options; each jail's plan is in
// src/confine/run.ts (landlockJail, bwrapJail, seatbeltJail, noJail).
import { usageError } from '../errors';
import type { MountSpec } from './mounts';

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
