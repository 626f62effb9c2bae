// arb fork (fsfork): options -> one call to fork(), then a shell in the fork on a terminal, or
// the fork's path alone on stdout.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Argv } from 'yargs';

import type { Context } from '../cli';
import { ArbError, usageError } from '../errors';
import { fork } from '../fork/fork';
import { validateForkName } from '../fork/names';

export function builder(y: Argv): Argv {
  return (
    y
      .positional('DIR', { type: 'string', describe: 'the directory to fork (default: the working directory)' })
      .positional('DEST', { type: 'string', describe: 'where the fork goes (default: DIR.N beside DIR); its base is .DEST.base beside it' })
      .option('name', {
        alias: 'n',
        type: 'string',
        requiresArg: true,
        describe: 'name the fork DIR.NAME instead of DIR.N',
      })
      .option('print', {
        type: 'boolean',
        describe: "print the fork's path, even on a terminal, instead of starting a shell there",
      })
      // --no-ignore sets `ignore` to false; `ignore` itself is only there for yargs' strict mode.
      .option('ignore', { type: 'boolean', hidden: true })
      .option('no-ignore', { type: 'boolean', describe: 'fork what .gitignore files ignore too (node_modules, build output…)' })
      // -l/--list and --prune: src/fork/list.ts and src/fork/prune.ts.
      .option('list', { alias: 'l', type: 'boolean', describe: 'list the forks of DIR (default: the working directory) and what is in each' })
      .option('json', { type: 'boolean', describe: 'with -l: print the list as JSON' })
      .option('prune', { type: 'boolean', describe: 'remove the forks of DIR that are unchanged or merged, and bases left over, once left alone for an hour' })
      .option('dry-run', { type: 'boolean', describe: 'with --prune: say what would be removed, remove nothing' })
      .example('arb fork -l', 'list the forks of the working directory: FORK, UPDATED, STATUS')
      .example('cd "$(arb fork)"', 'fork the working directory and go there')
      .example('arb fork -n try ~/src/turso', 'make ~/src/turso.try (and ~/src/.turso.try.base)')
  );
}

/** arb fork -l [--json] [DIR] and arb fork --prune [--dry-run] [DIR]. */
async function listOrPrune(args: Record<string, unknown>, ctx: Context): Promise<number> {
  if (args.list && args.prune) throw usageError('give either -l or --prune, not both');
  for (const flag of ['name', 'print', 'DEST'] as const) {
    if (args[flag] !== undefined) throw usageError(`${flag === 'DEST' ? 'DEST' : `--${flag}`} does not go with ${args.list ? '-l' : '--prune'}`);
  }
  if (args.ignore === false) throw usageError(`--no-ignore does not go with ${args.list ? '-l' : '--prune'}`);
  const dir = (args.DIR as string | undefined) ?? process.cwd();
  const write = (text: string) => process.stdout.write(text);
  const warn = (message: string) => process.stderr.write(`${ctx.program}: ${message}\n`);
  if (args.list) {
    if (args['dry-run']) throw usageError('--dry-run goes with --prune');
    return (await import('../fork/list')).runList(dir, Boolean(args.json), write, warn);
  }
  if (args.json) throw usageError('--json goes with -l');
  return (await import('../fork/prune')).runPrune(dir, Boolean(args['dry-run']), write, warn);
}

/** The exit status of a shell that ended, as shells report it. */
function statusOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const n = signal ? constants.signals[signal] : undefined;
  return n !== undefined ? 128 + n : 1;
}

/** Starts $SHELL (else /bin/sh) in the fork, and resolves with its exit status. */
function runShell(dir: string, ctx: Context): Promise<number> {
  const shell = process.env.SHELL || '/bin/sh';
  process.stderr.write(`${ctx.program}: starting ${shell} in ${dir}; exit it to come back\n`);
  // The terminal's Ctrl-C and Ctrl-\ are for the shell and what runs in it, not for arb.
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  process.on('SIGQUIT', ignore);
  return new Promise((resolve, reject) => {
    const child = spawn(shell, [], { cwd: dir, stdio: 'inherit' });
    child.on('error', (err) => {
      process.off('SIGINT', ignore);
      process.off('SIGQUIT', ignore);
      reject(new ArbError('ARB_IO', `cannot start the shell '${shell}' in '${dir}': ${(err as Error).message}`, { hint: 'set SHELL to a shell that exists, or use --print', cause: err }));
    });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', ignore);
      process.off('SIGQUIT', ignore);
      resolve(statusOf(code, signal));
    });
  });
}

export async function run(args: Record<string, unknown>, ctx: Context): Promise<number> {
  // -l/--list and --prune are handled here, before forking (their own issue).
  if (args.list || args.prune) return listOrPrune(args, ctx);
  if (args.json) throw usageError('--json goes with -l');
  if (args['dry-run']) throw usageError('--dry-run goes with --prune');

  const name = args.name as string | undefined;
  if (name !== undefined) {
    try {
      validateForkName(name);
    } catch (err) {
      if (err instanceof ArbError) throw usageError(`-n: ${err.message}${err.hint ? `: ${err.hint}` : ''}`);
      throw err;
    }
  }
  const dest = args.DEST as string | undefined;
  if (dest !== undefined && name !== undefined) throw usageError('give either -n NAME or DEST, not both');

  // Ctrl-C while cloning stops it and removes what was made.
  const abort = new AbortController();
  const stop = () => abort.abort();
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, stop);
  let result;
  try {
    result = await fork({
      dir: args.DIR as string | undefined,
      dest,
      name,
      noIgnore: args.ignore === false,
      warn: (message) => process.stderr.write(`${ctx.program}: ${message}\n`),
      progress: true,
      signal: abort.signal,
    });
  } finally {
    for (const s of signals) process.off(s, stop);
  }

  const onTerminal = Boolean(process.stdin.isTTY && process.stdout.isTTY) && !args.print;
  if (onTerminal) return runShell(result.fork, ctx);
  process.stdout.write(`${result.fork}\n`);
  return 0;
}
