// arb confine [options] [--] CMD [ARGS…]: options in, one call to src/confine/run.ts out.
// Everything after CMD is CMD's own (`arb confine ls -d /`): splitArgs takes CMD and its
// arguments off before yargs parses (yargs' own halt-at-non-option loses positionals in a
// subcommand, yargs/yargs#2423). Only yargs' types are imported at the top: confine starts before
// every agent, and the rest is loaded when it runs.
import type { Argv } from 'yargs';

import type { Context } from '../cli';
import type { ConfineRequest } from '../confine/request';

export function builder(y: Argv): Argv {
  return y
    .parserConfiguration({
      // --no-ignore is an option of its own, not the negation of an --ignore.
      'boolean-negation': false,
    })
    .positional('CMD', { type: 'string', describe: 'the command to run, looked up on PATH (put -- before one that starts with -)' })
    .positional('ARGS', { type: 'string', describe: "its arguments: everything after CMD is the command's, options included" })
    .option('dir', {
      alias: 'd',
      type: 'string',
      requiresArg: true,
      describe: 'run in DIR itself rather than in a fork of the working directory',
    })
    .option('write', {
      alias: 'w',
      type: 'string',
      requiresArg: true,
      describe: 'let the command write (and read) PATH too (repeatable)',
    })
    .option('read', {
      alias: 'r',
      type: 'string',
      requiresArg: true,
      describe: 'let the command read PATH in the home directory too (repeatable)',
    })
    .option('name', { alias: 'n', type: 'string', requiresArg: true, describe: 'name the fork DIR.NAME rather than DIR.N' })
    .option('no-ignore', { type: 'boolean', describe: 'fork what .gitignore files ignore too' })
    .option('rm', { type: 'boolean', describe: 'wait for the command, then remove the fork and its base' })
    .option('verbose', { alias: 'v', type: 'boolean', describe: 'say which Landlock ABI is enforced and what is granted' })
    // Hardening (src/confine/hardening.ts, environment.ts, explain.ts).
    .option('no-network', { type: 'boolean', describe: 'no network: only loopback (a network namespace), else Landlock and seccomp deny TCP and other sockets' })
    // --allow-host and --net-log (src/confine/net/).
    .option('allow-host', {
      type: 'string',
      requiresArg: true,
      describe: "let the command reach HOST only through confine's proxy (repeatable): HOST, *.DOMAIN (names under it), HOST:PORT (else 443 and 80), [IPv6]:PORT, or @registries; other hosts are refused or asked about",
    })
    .option('net-log', { type: 'string', requiresArg: true, describe: 'with --allow-host: write every connection, reached or refused, to FILE as JSON lines' })
    .option('keep-env', {
      alias: 'e',
      type: 'string',
      requiresArg: true,
      describe: 'keep the variable NAME although it looks secret (repeatable; tokens, keys and SSH_AUTH_SOCK are removed)',
    })
    .option('explain', { type: 'boolean', describe: 'print what the command could read, write and reach here, and which layers this kernel enforces; run nothing' })
    .option('headless', { type: 'boolean', describe: 'no one is at the screen: gh is not offered through confine (no shim on PATH), and fails inside as it would' })
    .option('landlock-only', { type: 'boolean', describe: 'Landlock alone, without namespaces (as ARB_CONFINE_NO_NAMESPACES=1 does)' })
    // Jails, mounts and presets (src/confine/jail.ts, bwrap.ts, mounts.ts, presets.ts).
    .option('jail', {
      type: 'string',
      requiresArg: true,
      describe: 'landlock (Linux, the default), seatbelt (macOS, the default), bwrap (bubblewrap, Linux) or none (no isolation: warns every time)',
    })
    .option('mount', {
      type: 'string',
      requiresArg: true,
      describe: "with --jail bwrap: TYPE:DEST or TYPE:SRC:DEST, TYPE ro, rw, tmpfs, dev or proc, applied after the defaults in order (repeatable; '\\:' is a ':' in a path)",
    })
    .option('preset', {
      type: 'string',
      requiresArg: true,
      describe: "claude, codex or opencode: the agent's command, the paths it needs and its API key (applied by CMD's name when not given; none: no preset)",
    })
    .example('arb confine -w ~/.claude claude', 'run Claude Code in a fork of the working directory')
    .example('arb confine -d . -- make test', 'run make in the working directory itself')
    .epilogue('See man confine for what the command may and may not do.');
}

function list(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

function single(v: unknown, flag: string): string | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { usageError } = require('../errors') as typeof import('../errors');
    throw usageError(`${flag} was given ${v.length} times; give it once`);
  }
  return String(v);
}

interface Declared {
  alias?: string | readonly string[];
  type?: string;
  array?: boolean;
  string?: boolean;
  number?: boolean;
  nargs?: number;
}

/**
 * The names (aliases included) of the options the builder declares that take a value, as yargs
 * would list them: typed string, number or array, or with nargs. Read by running the builder on
 * a stand-in that only records what it is told, because making a real yargs instance just to
 * ask it costs more than the rest of parsing (confine starts before every agent).
 */
export function optionsTakingValue(build: (y: Argv) => Argv = builder): Set<string> {
  const groups = new Map<string, Set<string>>();
  const valued = new Set<string>();
  const group = (key: string): Set<string> => {
    let g = groups.get(key);
    if (!g) {
      g = new Set([key]);
      groups.set(key, g);
    }
    return g;
  };
  const alias = (key: string, names: string | readonly string[] | undefined): void => {
    const g = group(key);
    for (const n of names === undefined ? [] : typeof names === 'string' ? [names] : names) {
      const other = group(n);
      for (const m of other) {
        g.add(m);
        groups.set(m, g);
      }
    }
  };
  const declare = (key: string, o: Declared = {}): void => {
    alias(key, o.alias);
    if (o.type === 'string' || o.type === 'number' || o.type === 'array' || o.array || o.string || o.number || (o.nargs ?? 0) > 0) valued.add(key);
  };
  const keys = (k: string | readonly string[]): readonly string[] => (typeof k === 'string' ? [k] : k);
  const recorder: Argv = new Proxy({} as Argv, {
    get(_target, prop) {
      switch (prop) {
        case 'option':
        case 'options':
          return (k: string | Record<string, Declared>, o?: Declared) => {
            if (typeof k === 'string') declare(k, o);
            else for (const [name, decl] of Object.entries(k)) declare(name, decl);
            return recorder;
          };
        case 'positional':
          return (k: string, o?: Declared) => (declare(k, o), recorder);
        case 'string':
        case 'number':
        case 'array':
          return (k: string | readonly string[]) => {
            for (const name of keys(k)) declare(name, { [prop]: true });
            return recorder;
          };
        case 'nargs':
          return (k: string, n: number) => (declare(k, { nargs: n }), recorder);
        case 'alias':
          return (k: string, a: string | readonly string[]) => (alias(k, a), recorder);
        default:
          // Usage, examples, parser configuration…: nothing that decides what takes a value.
          return () => recorder;
      }
    },
  });
  build(recorder);
  const names = new Set<string>();
  for (const key of valued) for (const n of group(key)) names.add(n);
  return names;
}

/**
 * Splits confine's arguments at CMD: the first word that is neither one of confine's options nor
 * the value of one, or whatever follows `--`. Which options take a value is read from the
 * builder, so options added there are split right without a change here.
 */
export function splitArgs(args: string[]): { own: string[]; rest: string[] } {
  const takesValue = optionsTakingValue();
  let i = 0;
  while (i < args.length) {
    const a = args[i];
    if (a === '--') return { own: args.slice(0, i), rest: args.slice(i + 1) };
    if (!a.startsWith('-') || a === '-') break;
    if (a.startsWith('--')) {
      i += !a.includes('=') && takesValue.has(a.slice(2)) ? 2 : 1;
    } else if (/^-[A-Za-z]+$/.test(a)) {
      // A cluster of short flags (-vd DIR): only the last may take the next word.
      i += takesValue.has(a[a.length - 1]) ? 2 : 1;
    } else {
      i += 1; // -dDIR: the value is attached
    }
  }
  return { own: args.slice(0, Math.min(i, args.length)), rest: args.slice(Math.min(i, args.length)) };
}

/**
 * yargs' answer as the one typed request confine takes (src/confine/request.ts). The only place
 * that reads yargs' keys: a repeated option that takes one value is a usage error here.
 */
export function toRequest(args: Record<string, unknown>, ctx: Context, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): ConfineRequest {
  const [command, ...rest] = ctx.rest ?? [];
  return {
    program: ctx.program,
    command: command ?? '',
    args: rest,
    dir: single(args.dir, '-d'),
    write: list(args.write),
    read: list(args.read),
    name: single(args.name, '-n'),
    noIgnore: Boolean(args['no-ignore']),
    rm: Boolean(args.rm),
    verbose: Boolean(args.verbose),
    cwd,
    env,
    keepEnv: list(args['keep-env']),
    noNetwork: Boolean(args['no-network']),
    allowHost: list(args['allow-host']),
    netLog: single(args['net-log'], '--net-log'),
    landlockOnly: Boolean(args['landlock-only']),
    headless: Boolean(args.headless),
    jail: single(args.jail, '--jail'),
    mounts: list(args.mount),
    preset: single(args.preset, '--preset'),
    wait: false,
  };
}

export async function run(args: Record<string, unknown>, ctx: Context): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { usageError } = require('../errors') as typeof import('../errors');
  const request = toRequest(args, ctx);
  // --explain says what confine would do, with or without CMD, and runs nothing (hardening).
  const explain = Boolean(args.explain);
  // --preset NAME without CMD runs the preset's command (src/confine/presets.ts).
  if (request.command === '' && request.preset !== undefined && request.preset !== 'none' && (ctx.rest ?? []).length === 0) {
    request.command = (require('../confine/presets') as typeof import('../confine/presets')).getPreset(request.preset).command;
  }
  if ((ctx.rest ?? []).length === 0 && request.command === '' && !explain) throw usageError('name the command to run: confine [options] [--] CMD [ARGS…]');
  if (explain) return (require('../confine/explain') as typeof import('../confine/explain')).explain(request);
  return (require('../confine/run') as typeof import('../confine/run')).confine(request);
}
