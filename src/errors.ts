// Errors a person can act on: every failure arb reports is an ArbError with an ARB_* code, a
// message that names the operation and the object, and (where there is one) what to do.
import { getSystemErrorName } from 'node:util';

export type ArbCode =
  | 'ARB_USAGE' // bad options or arguments (exit 2)
  | 'ARB_NOT_FOUND' // a path the user named does not exist
  | 'ARB_NOT_DIRECTORY' // a path the user named is not a directory
  | 'ARB_EXISTS' // a destination that must not exist does
  | 'ARB_BAD_NAME' // a fork name that is refused
  | 'ARB_NO_BASE' // a fork without its base
  | 'ARB_CLONE' // cloning failed part way
  | 'ARB_GIT' // git failed where it must not
  | 'ARB_UNSUPPORTED' // the platform or kernel lacks what is needed
  | 'ARB_COMMAND_NOT_FOUND' // confine: 127
  | 'ARB_COMMAND_NOT_EXECUTABLE' // confine: 126
  | 'ARB_IO' // any other system call failure
  | 'ARB_INTERNAL';

export interface ArbErrorOptions {
  exitCode?: number;
  hint?: string;
  cause?: unknown;
  errno?: string; // e.g. 'ENOSPC'
  path?: string;
}

export class ArbError extends Error {
  override readonly name = 'ArbError';
  readonly code: ArbCode;
  readonly exitCode: number;
  readonly hint?: string;
  readonly errno?: string;
  readonly path?: string;

  constructor(code: ArbCode, message: string, options: ArbErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.exitCode = options.exitCode ?? (code === 'ARB_USAGE' ? 2 : 1);
    this.hint = options.hint;
    this.errno = options.errno;
    this.path = options.path;
  }
}

export function usageError(message: string): ArbError {
  return new ArbError('ARB_USAGE', message, { exitCode: 2 });
}

/** A Node-style system error (from fs, child_process or the addon via src/native.ts). */
export interface SystemError extends Error {
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
}

export function isSystemError(err: unknown): err is SystemError {
  return err instanceof Error && typeof (err as SystemError).code === 'string';
}

/** The errno name of a system error: 'ENOENT', or undefined. */
export function errnoName(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as SystemError;
  if (typeof e.code === 'string' && e.code.startsWith('E')) return e.code;
  if (typeof e.errno === 'number' && e.errno !== 0) {
    try {
      return getSystemErrorName(e.errno < 0 ? e.errno : -e.errno);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

// One place that says what to do about a system error.
const HINTS: Record<string, string> = {
  ENOSPC: 'free some space on that file system and try again',
  EDQUOT: 'the disk quota is used up: free some space and try again',
  EACCES: 'check the permissions of that path',
  EPERM: 'check the permissions of that path',
  EROFS: 'that file system is mounted read-only',
  EXDEV: 'the fork must be on the same file system',
  ENOENT: 'check that the path exists',
  ENOTDIR: 'a component of that path is not a directory',
  EEXIST: 'choose another name or remove what is there',
  ENAMETOOLONG: 'use a shorter name',
  EMFILE: 'too many open files: raise the limit (ulimit -n)',
};

const DESCRIPTIONS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EXDEV: 'different devices',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EEXIST: 'file exists',
  ENAMETOOLONG: 'file name too long',
  EMFILE: 'too many open files',
  EISDIR: 'is a directory',
  ENOTEMPTY: 'directory not empty',
  ELOOP: 'too many levels of symbolic links',
  EINVAL: 'invalid argument',
  EOPNOTSUPP: 'operation not supported',
  ENOSYS: 'function not implemented',
};

/**
 * Wraps a system error as an ArbError: "cannot clone '/x/y': no space left on device (ENOSPC)",
 * with the hint that goes with the errno.
 */
export function systemError(operation: string, target: string, err: unknown, hint?: string): ArbError {
  const name = errnoName(err);
  const what = name ? `${DESCRIPTIONS[name] ?? name.toLowerCase()} (${name})` : String((err as Error)?.message ?? err);
  return new ArbError('ARB_IO', `cannot ${operation} '${target}': ${what}`, {
    cause: err,
    errno: name,
    path: target,
    hint: hint ?? (name ? HINTS[name] : undefined),
  });
}

/** The one line (or two) the CLI prints for an error: "arb fork: …", then the hint. */
export function formatError(program: string, err: unknown): string {
  if (err instanceof ArbError) {
    return err.hint ? `${program}: ${err.message}: ${err.hint}` : `${program}: ${err.message}`;
  }
  if (isSystemError(err) && err.syscall) {
    const wrapped = systemError(err.syscall, err.path ?? '', err);
    return formatError(program, wrapped);
  }
  const message = err instanceof Error ? err.message : String(err);
  return `${program}: internal error: ${message}`;
}

/** The exit status that goes with an error. */
export function exitCodeOf(err: unknown): number {
  return err instanceof ArbError ? err.exitCode : 1;
}
