// What a confined command may ask `gh` to do, and with which of its variables.
//
// gh runs outside the sandbox with your token, your files and your programs, so the rules err on
// the side of asking: only a command line whose shape is known (the subcommand found past gh's
// flags) and that reaches for nothing outside the directory can be allowed always; everything
// else is asked about every time, and what would hand the command your credentials or gh's own
// configuration is never run.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { isInside } from '../../../paths/inside';
import type { JudgeContext, Tool, Verdict } from './tool';

/** Never run, without asking: they read or change credentials, or what gh itself runs. */
const NEVER: Record<string, string> = {
  auth: 'gh auth reads and changes your credentials',
  config: "gh config changes gh's configuration, which names programs it runs",
  alias: 'gh alias makes commands that run programs outside the sandbox',
  extension: 'gh extension installs and runs programs outside the sandbox',
  extensions: 'gh extension installs and runs programs outside the sandbox',
  ext: 'gh extension installs and runs programs outside the sandbox',
  secret: 'gh secret reads and changes repository secrets',
  variable: 'gh variable reads and changes repository variables',
  'ssh-key': 'gh ssh-key changes the keys that can reach your account',
  'gpg-key': 'gh gpg-key changes the keys your commits are trusted by',
};

/** Asked about every time, whatever was answered before. */
const EVERY_TIME: Record<string, string> = {
  api: 'gh api can make any request with your token',
};

/** Commands made of subcommands: "Allow always" keeps the command and its subcommand. */
const GROUPS = new Set([
  'agent-task', 'at', 'attestation', 'cache', 'codespace', 'cs', 'gist', 'issue', 'label', 'org',
  'pr', 'preview', 'project', 'release', 'repo', 'rs', 'ruleset', 'run', 'search', 'workflow',
]);

/** Commands without subcommands: "Allow always" keeps the command. */
const LEAVES = new Set(['browse', 'co', 'completion', 'help', 'status', 'version']);

/**
 * The variables that reach the real gh from the command: how it prints, and which repository.
 * Left out on purpose: GH_TOKEN, GITHUB_TOKEN, GH_ENTERPRISE_TOKEN (a token the command chose,
 * or yours sent where it chose), GH_HOST (the host your token goes to), GH_CONFIG_DIR and XDG_*
 * (a configuration the command wrote), GH_EDITOR, GH_BROWSER, GH_PAGER, EDITOR, VISUAL, PAGER,
 * BROWSER (programs gh would run outside the sandbox), GH_DEBUG (prints requests), GIT_* (git's
 * configuration and programs), PATH and HOME. gh gets yours, from when confine started.
 */
const FORWARDED = [
  'GH_REPO', 'GH_PROMPT_DISABLED', 'GH_NO_UPDATE_NOTIFIER', 'GH_SPINNER_DISABLED', 'GH_FORCE_TTY',
  'NO_COLOR', 'CLICOLOR', 'CLICOLOR_FORCE', 'TERM', 'COLORTERM', 'COLUMNS', 'LINES',
  'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'LC_MESSAGES', 'TZ',
];

/**
 * Subcommands that read or write files by name: the files they are given (gist create, release
 * upload), or ones named by the server written where the command points (release download, repo
 * clone). gh does so with your rights and follows links, so a command could, with a link made at
 * the right moment, have it read or write a file of yours: never allowed always.
 */
const FILE_SUBCOMMANDS = new Set([
  'gh attestation download', 'gh attestation verify', 'gh at download', 'gh at verify',
  'gh codespace cp', 'gh cs cp', 'gh codespace ssh', 'gh cs ssh',
  'gh gist clone', 'gh gist create', 'gh gist edit',
  'gh release create', 'gh release download', 'gh release upload',
  'gh repo clone', 'gh repo fork', 'gh run download',
]);

/** Flags that name a file gh reads or writes (-F is --body-file, or a field that can be @FILE). */
const FILE_FLAGS = ['--body-file', '-F', '--field', '--notes-file', '--input', '--recover', '--output', '-O', '--dir', '-D'];

/** OWNER/REPO, or HOST/OWNER/REPO, as -R and GH_REPO take them. */
const REPO = /^(?:([A-Za-z0-9.-]+)\/)?[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const DEFAULT_HOST = 'github.com';

export interface ParsedGh {
  /** The command ('pr'), or undefined if none was found. */
  command?: string;
  /** The subcommand ('create') of a group, if found. */
  subcommand?: string;
  /** Values given to -R/--repo. */
  repos: string[];
  /** Set when gh's flags before the (sub)command are not ones these rules know. */
  unknownShape?: string;
  /** Index in argv of the first argument after the (sub)command. */
  rest: number;
}

function isHelp(arg: string): boolean {
  return arg === '-h' || arg === '--help';
}

/**
 * Skips the flags gh takes before a command or subcommand (-R/--repo with its value, -h/--help,
 * --version), as cobra does. Returns the index of the next word, or an error for any other flag:
 * cobra would take the word after an unknown flag as its value, so guessing could find the wrong
 * command.
 */
function skipFlags(argv: string[], i: number, repos: string[], allowVersion: boolean): number | string {
  while (i < argv.length) {
    const arg = argv[i];
    if (arg === '--') return 'an argument "--" before the command';
    if (!arg.startsWith('-') || arg === '-') return i;
    if (isHelp(arg) || (allowVersion && arg === '--version')) {
      i += 1;
    } else if (arg === '-R' || arg === '--repo') {
      if (i + 1 >= argv.length) return `${arg} without a value`;
      repos.push(argv[i + 1]);
      i += 2;
    } else if (arg.startsWith('--repo=')) {
      repos.push(arg.slice('--repo='.length));
      i += 1;
    } else if (arg.startsWith('-R')) {
      repos.push(arg.slice(arg.startsWith('-R=') ? 3 : 2));
      i += 1;
    } else {
      return `the flag ${arg} before the command`;
    }
  }
  return i;
}

/** Finds gh's command and subcommand past its flags, as gh (cobra) would. */
export function parseGh(argv: string[]): ParsedGh {
  const repos: string[] = [];
  let i = skipFlags(argv, 0, repos, true);
  if (typeof i === 'string') return { repos, unknownShape: i, rest: argv.length };
  if (i >= argv.length) return { repos, unknownShape: 'no command', rest: argv.length };
  const command = argv[i];
  if (!GROUPS.has(command)) return { command, repos, rest: i + 1 };
  const j = skipFlags(argv, i + 1, repos, false);
  if (typeof j === 'string') return { command, repos, unknownShape: j, rest: argv.length };
  if (j >= argv.length) return { command, repos, unknownShape: `gh ${command} without a subcommand`, rest: argv.length };
  const subcommand = argv[j];
  if (!/^[a-z][a-z0-9-]*$/.test(subcommand)) {
    return { command, repos, unknownShape: `an unknown subcommand ${JSON.stringify(subcommand)}`, rest: argv.length };
  }
  return { command, subcommand, repos, rest: j + 1 };
}

/** The host a repository or URL names, or undefined if it names none. */
function hostOf(value: string): string | undefined {
  const url = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]*@)?([^/?#:]+)/i.exec(value);
  if (url) return url[2].toLowerCase();
  const scp = /^[^/@:]+@([^/:]+):/.exec(value); // git@host:owner/repo
  if (scp) return scp[1].toLowerCase();
  const repo = REPO.exec(value);
  if (repo && repo[1]) return repo[1].toLowerCase();
  return undefined;
}

/**
 * The ways an argument may name a file gh would read or write: the argument, what follows `=`
 * (--body-file=F, key=@F), what follows a short flag (-FVALUE), each without a leading `@`.
 */
function pathCandidates(arg: string): string[] {
  const out = new Set<string>([arg]);
  const eq = arg.indexOf('=');
  if (eq >= 0) out.add(arg.slice(eq + 1));
  if (/^-[A-Za-z]./.test(arg)) out.add(arg.slice(2));
  for (const c of [...out]) if (c.startsWith('@')) out.add(c.slice(1));
  out.delete('');
  out.delete('-');
  return [...out];
}

/**
 * An argument that names something outside the directory, by its text (an absolute path or
 * `..` out of it) or by what it is now (a link out of it): gh would read or write it with your
 * rights, so such a command line is asked about every time.
 */
export function outsidePath(arg: string, context: Pick<JudgeContext, 'root' | 'cwd'>): string | undefined {
  for (const candidate of pathCandidates(arg)) {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(candidate)) continue; // a URL, judged by its host
    const expanded = candidate.startsWith('~') ? `/${candidate}` : candidate; // ~ is never inside
    const resolved = path.resolve(context.cwd, expanded);
    if (!isInside(resolved, context.root, 'lexical')) return candidate;
    let real: string | undefined;
    try {
      real = fs.realpathSync(resolved);
    } catch {
      // Not there (yet): its parent decides where a file made there would go.
      try {
        real = path.join(fs.realpathSync(path.dirname(resolved)), path.basename(resolved));
      } catch {
        real = undefined;
      }
    }
    if (real !== undefined && !isInside(real, context.root, 'lexical')) return candidate;
  }
  return undefined;
}

/** Why this command line must be asked about every time even if its subcommand is allowed, if so. */
function everyTimeReason(argv: string[], parsed: ParsedGh, context: JudgeContext): string | undefined {
  const rest = argv.slice(parsed.rest);
  if (rest.includes('--')) return 'it passes arguments on to git';
  const key = parsed.subcommand !== undefined ? `gh ${parsed.command} ${parsed.subcommand}` : `gh ${parsed.command}`;
  if (FILE_SUBCOMMANDS.has(key)) return `${key} reads or writes files by name, with your rights`;
  for (const arg of rest) {
    const flag = FILE_FLAGS.find((f) => arg === f || arg.startsWith(`${f}=`) || (!f.startsWith('--') && arg.startsWith(f) && arg.length > 2));
    if (flag !== undefined) return `${flag} names a file gh reads or writes with your rights`;
  }
  // -R may come after the subcommand too.
  const later: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if ((a === '-R' || a === '--repo') && i + 1 < rest.length) later.push(rest[++i]);
    else if (a.startsWith('--repo=')) later.push(a.slice('--repo='.length));
    else if (a.startsWith('-R')) later.push(a.slice(a.startsWith('-R=') ? 3 : 2));
  }
  const repos = [...parsed.repos, ...later, ...(context.env.GH_REPO !== undefined ? [context.env.GH_REPO] : [])];
  for (const repo of repos) {
    if (!REPO.test(repo) && hostOf(repo) === undefined) return `it names an unusual repository ${JSON.stringify(repo)}`;
    const host = hostOf(repo);
    if (host !== undefined && host !== DEFAULT_HOST) return `it names the host ${host}`;
  }
  for (const arg of rest) {
    if (arg === '--hostname' || arg.startsWith('--hostname=')) return 'it names a host';
    for (const candidate of pathCandidates(arg)) {
      // A URL, or HOST/OWNER/REPO (a host has dots between names), as gh takes for a repository.
      const repoHost = REPO.exec(candidate)?.[1];
      const isHost = repoHost !== undefined && /^[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(repoHost);
      const host = /^[a-z][a-z0-9+.-]*:\/\//i.test(candidate) ? hostOf(candidate) : isHost ? repoHost.toLowerCase() : undefined;
      if (host !== undefined && host !== DEFAULT_HOST && host !== `www.${DEFAULT_HOST}`) return `it names the host ${host}`;
    }
    const outside = outsidePath(arg, context);
    if (outside !== undefined) return `it names ${JSON.stringify(outside)}, outside ${context.root}`;
  }
  return undefined;
}

export function judgeGh(argv: string[], context: JudgeContext): Verdict {
  const parsed = parseGh(argv);
  if (parsed.command !== undefined && Object.prototype.hasOwnProperty.call(NEVER, parsed.command)) {
    return { kind: 'never', reason: NEVER[parsed.command] };
  }
  if (parsed.unknownShape !== undefined) {
    // Where the command is not clear, a word that names a command never run is enough: gh might
    // find it where these rules did not.
    const never = argv.find((a) => Object.prototype.hasOwnProperty.call(NEVER, a));
    if (never !== undefined) return { kind: 'never', reason: NEVER[never] };
    return { kind: 'ask', remember: null, reason: `gh's command is not clear: ${parsed.unknownShape}` };
  }
  const command = parsed.command as string;
  if (Object.prototype.hasOwnProperty.call(EVERY_TIME, command)) {
    return { kind: 'ask', remember: null, reason: EVERY_TIME[command] };
  }
  if (!GROUPS.has(command) && !LEAVES.has(command)) {
    return { kind: 'ask', remember: null, reason: `gh ${command} is not a command these rules know (an alias or an extension?)` };
  }
  const reason = everyTimeReason(argv, parsed, context);
  const key = parsed.subcommand !== undefined ? `gh ${command} ${parsed.subcommand}` : `gh ${command}`;
  return reason !== undefined ? { kind: 'ask', remember: null, reason } : { kind: 'ask', remember: key };
}

export function forwardGhEnv(env: NodeJS.ProcessEnv | Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = env[name];
    if (typeof value === 'string' && !value.includes('\0') && value.length <= 4096) out[name] = value;
  }
  return out;
}

/**
 * gh prints through no pager and opens no editor: either would run outside the sandbox on the
 * command's terminal, which the command may be typing into. (gh asks for a body with an editor
 * only when none is given: the command passes --body.) git, under gh, likewise (tools/git.ts).
 */
export const GH_FIXED_ENV: Record<string, string> = {
  GH_PAGER: 'cat',
  PAGER: 'cat',
  GH_EDITOR: 'false',
  EDITOR: 'false',
  VISUAL: 'false',
};

/** The token `gh auth token` prints, if it prints one (gh run outside the fork, as you). */
function ghToken(program: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('GIT_')) clean[k] = v;
  // Loaded here, not at the top: confine reads this table at every start, and needs
  // child_process (which brings streams and sockets with it) only once gh is asked for.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { execFile } = require('node:child_process') as typeof import('node:child_process');
  return new Promise((resolve) => {
    execFile(program, ['auth', 'token'], { cwd: '/', env: clean, timeout: 10_000, maxBuffer: 64 * 1024 }, (err, stdout) => {
      const token = String(stdout ?? '').trim();
      resolve(!err && /^[A-Za-z0-9_.-]{1,1024}$/.test(token) ? token : undefined);
    });
  });
}

/**
 * gh's own files stay out of its sandbox: its token (hosts.yml, or the keyring) would otherwise be
 * readable through a pull-request template that is a link to it, and sent with the pull request.
 * So gh gets its token as GH_TOKEN (GH_ENTERPRISE_TOKEN for another GH_HOST), asked of gh itself
 * here, in /, and a private GH_CONFIG_DIR with a copy of config.yml (its settings) and no hosts.yml.
 */
export async function prepareGh(program: string, env: NodeJS.ProcessEnv, home: string, dir: string): Promise<Record<string, string>> {
  const configDir = env.GH_CONFIG_DIR ?? path.join(env.XDG_CONFIG_HOME ?? path.join(home, '.config'), 'gh');
  try {
    fs.copyFileSync(path.join(configDir, 'config.yml'), path.join(dir, 'config.yml'));
  } catch {
    /* no settings: gh's defaults */
  }
  const out: Record<string, string> = { GH_CONFIG_DIR: dir };
  if (env.GH_TOKEN || env.GITHUB_TOKEN || env.GH_ENTERPRISE_TOKEN || env.GITHUB_ENTERPRISE_TOKEN) return out;
  const token = await ghToken(program, env);
  if (token !== undefined) out[env.GH_HOST && env.GH_HOST !== DEFAULT_HOST ? 'GH_ENTERPRISE_TOKEN' : 'GH_TOKEN'] = token;
  return out;
}

export const gh: Tool = {
  name: 'gh',
  judge: judgeGh,
  forwardEnv: forwardGhEnv,
  fixedEnv: GH_FIXED_ENV,
  runsGit: true,
  prepare: prepareGh,
};
