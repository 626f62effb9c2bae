#!/usr/bin/env node
// The command line: yargs wiring only. One executable, called as `arb` (with subcommands) or as
// one of its aliases, `fsfork`, `confine`, `fsdiff` (and `gh`, the broker's shim), which it
// dispatches on. Each command's module is loaded only when that command runs, so `confine`, which
// starts before every agent, loads no more than it needs.
import * as path from 'node:path';
import type { Argv } from 'yargs';

import { ArbError, exitCodeOf, formatError, usageError } from './errors';

/** What a command module (src/commands/*.ts) exports. */
export interface CommandModule {
  /** Adds the command's options and positionals. */
  builder(y: Argv): Argv;
  /** Runs the command; resolves with the exit status. */
  run(args: Record<string, unknown>, ctx: Context): Promise<number>;
  /**
   * For a command whose trailing words are another program's (confine CMD ARGS…): splits its
   * arguments into its own options and the rest, before yargs parses, so that none of the rest
   * is read as an option. The rest reaches run() as ctx.rest.
   */
  splitArgs?(args: string[]): { own: string[]; rest: string[] };
}

export interface Context {
  /** How errors are prefixed: "arb fork", "fsfork", … */
  program: string;
  /** What splitArgs set apart, for a command that has it. */
  rest?: string[];
}

interface CommandEntry {
  /** The positional part of the usage line. */
  usage: string;
  describe: string;
  alias: string;
  load(): CommandModule;
}

const COMMANDS: Record<string, CommandEntry> = {
  fork: {
    usage: '[DIR] [DEST]',
    describe: 'make a copy-on-write fork of a directory next to it, with a hidden base',
    alias: 'fsfork',
    load: () => require('./commands/fork') as CommandModule,
  },
  confine: {
    // CMD and its ARGS are taken off by the module's splitArgs before yargs parses.
    usage: '[CMD] [ARGS..]',
    describe: 'run CMD in a fork where it may write only there and cannot read secrets',
    alias: 'confine',
    load: () => require('./commands/confine') as CommandModule,
  },
  diff: {
    usage: '<FORK|DIR1> [DIR2]',
    describe: 'print, as a patch git apply takes, what changed in a fork since it was made',
    alias: 'fsdiff',
    load: () => require('./commands/diff') as CommandModule,
  },
};

const ALIASES: Record<string, string> = { fsfork: 'fork', confine: 'confine', fsdiff: 'diff' };

function version(): string {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  return (require('../package.json') as { version: string }).version;
}

/** Whether yargs will print help for these arguments: -h or --help among the options (or -vh). */
export function asksForHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a.startsWith('--help=') || /^-[A-Za-z]*h[A-Za-z]*$/.test(a)) return true;
  }
  return false;
}

/** The name arb was called by, without directory or a `.js` ending. */
export function invokedName(argv1: string | undefined): string {
  return path.basename(argv1 ?? 'arb').replace(/\.js$/, '');
}

/**
 * Runs arb with the given arguments (without node and script) as if called by `name`.
 * Resolves with the exit status; never calls process.exit.
 */
export async function main(argv: string[], name = 'arb'): Promise<number> {
  if (name === 'gh') {
    const shim = require('./confine/broker/shim') as { runShim(argv: string[]): Promise<number> };
    return shim.runShim(argv);
  }
  let alias: string | undefined = ALIASES[name];
  let program = alias ? name : 'arb';
  // `arb CMD …` is parsed as its alias is, with CMD as yargs' only (default) command, so that it
  // behaves and reads the same. And it starts faster: yargs renders a subcommand's whole help
  // after starting its handler, to have it ready (19 ms for confine's many options).
  if (!alias && argv[0] !== undefined && Object.prototype.hasOwnProperty.call(COMMANDS, argv[0])) {
    alias = argv[0];
    program = `arb ${alias}`;
    argv = argv.slice(1);
  }
  let status = 0;
  let program2 = program;
  const parserErrors = new Set<unknown>();

  // A command whose trailing words belong to another program has them taken off here.
  let rest: string[] | undefined;
  const split = alias ? COMMANDS[alias].load().splitArgs : undefined;
  if (split) {
    const parts = split(argv);
    rest = parts.rest;
    argv = parts.own;
  }

  // yargs is loaded here, not at the top, so that the gh shim never pays for it.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const yargs = require('yargs/yargs') as typeof import('yargs/yargs');
  const parser = yargs(argv)
    .scriptName(program)
    .strict()
    .exitProcess(false)
    .version(version())
    .help()
    .alias('h', 'help')
    .fail((msg, err) => {
      if (err) throw err;
      const e = usageError(msg);
      parserErrors.add(e);
      throw e;
    });

  // The help's width is set only where help may be shown: reading it makes process.stdout (a
  // stream, or a socket for a pipe), which a command that shows none never needs (confine's
  // command takes its output over).
  // (Read through another name: the bundle makes `process.stdout.columns` undefined, so that
  // yargs does not make the stream when it loads; scripts/build-cli.js.)
  const wrapHelp = () => {
    const out = process.stdout;
    return parser.wrap(Math.min(100, out.columns || 80));
  };
  if (asksForHelp(argv)) wrapHelp();

  const builderFor = (entry: CommandEntry, prog: string) => (y: Argv) => {
    program2 = prog;
    return entry.load().builder(y);
  };
  const handlerFor = (entry: CommandEntry, prog: string) => async (args: Record<string, unknown>) => {
    status = await entry.load().run(args, { program: prog, rest });
  };

  if (alias) {
    const entry = COMMANDS[alias];
    parser.command(`$0 ${entry.usage}`, entry.describe, builderFor(entry, program), handlerFor(entry, program));
  } else {
    // No command first (arb --help, a typo, or an option before the command): each command's
    // module is loaded only if yargs runs that command.
    for (const [cmd, entry] of Object.entries(COMMANDS)) {
      parser.command(`${cmd} ${entry.usage}`, entry.describe, builderFor(entry, `arb ${cmd}`), handlerFor(entry, `arb ${cmd}`));
    }
    parser
      .completion('completion', 'print a shell completion script (add its output to ~/.bashrc or ~/.zshrc)')
      .demandCommand(1, 'name a command: fork, confine or diff')
      .recommendCommands()
      .usage('arb: fork a directory, confine a command to the fork, diff what it changed\n\nUsage: arb <command> [options]')
      .epilogue('Aliases: fsfork = arb fork, confine = arb confine, fsdiff = arb diff. See man arb.');
  }

  try {
    await parser.parseAsync();
    return status;
  } catch (err) {
    const usage = err instanceof ArbError && err.code === 'ARB_USAGE';
    if (parserErrors.has(err)) {
      wrapHelp();
      process.stderr.write(`${await parser.getHelp()}\n\n`);
    }
    process.stderr.write(`${formatError(program2, err)}\n`);
    // arb diff exits 2 on any error, as diff does.
    return usage || program2 === 'arb diff' || program2 === 'fsdiff' ? 2 : exitCodeOf(err);
  }
}

if (require.main === module) {
  main(process.argv.slice(2), invokedName(process.argv[1])).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`${formatError('arb', err)}\n`);
      process.exitCode = 1;
    },
  );
}
