// Asking the user whether a confined command may run a tool outside: with the program CONFINE_ASK
// names, else a dialog (macOS: an alert whose default button, Deny, counts down and is pressed at
// zero; Linux: zenity or kdialog where a desktop is present), else not at all, which is "no".
//
// The command line shown is the command's own text, so it is shown so that it cannot pass for
// another: every word shell-quoted, control and invisible characters escaped, and never pasted
// into a script or markup (the macOS script takes it as an argument).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { isInsideAny } from '../../paths/inside';
import { isUntrusted, replaceableByUser } from '../../paths/programs';
import { findOnPath } from './find-tools';
import { killTree } from './process-tree';

export { findOnPath };

export type Answer = 'once' | 'always' | 'no';

export interface Question {
  /** The command line, the tool's name first ('gh', 'pr', 'create'). */
  argv: string[];
  /** Where it would run. */
  cwd: string;
  /** Whether "Allow always" may be kept for it (false: asked every time, e.g. gh api). */
  offerAlways: boolean;
  /** Why it is asked every time, shown under the command line. */
  note?: string;
  /** The repository the tool acts on (its top), if any: from confine's own copy of .git. */
  repository?: string;
  /** Its remotes, `NAME URL` each: where a push goes. */
  remotes?: string[];
  /** Variables from the command that choose where the tool acts (`GH_REPO=OWNER/REPO`). */
  variables?: string[];
  /** The first line, when the question is not about running a tool (--allow-host's hosts). */
  heading?: string;
}

/** Each remote as `NAME URL` (branch:NAME for a branch that pushes to a URL), quoted. */
function remoteWords(q: Question): string[] {
  return (q.remotes ?? []).map((r) => {
    const space = r.indexOf(' ');
    return `${displayCommandLine([r.slice(0, space)])} ${displayCommandLine([r.slice(space + 1)])}`;
  });
}

/** The lines that say where the tool acts: the repository and each remote, nothing hidden. */
export function whereLines(q: Question): string[] {
  const given = (q.variables ?? []).map((v) => `with ${displayCommandLine([v])}`);
  if (q.repository === undefined) return given;
  const lines = [...given, `repository ${displayCommandLine([q.repository])}`];
  for (const r of remoteWords(q)) lines.push(r.startsWith('branch:') ? `branch ${r.slice('branch:'.length).replace(' ', ' pushes to ')}` : `remote ${r}`);
  if ((q.remotes ?? []).length === 0) lines.push('no remote');
  return lines;
}

export const DEFAULT_HEADING = 'A confined command asks to run, outside the sandbox:';

export interface AskOptions {
  /** The environment confine started with: CONFINE_ASK, DISPLAY, PATH come from here. */
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Seconds before a dialog answers Deny by itself. */
  seconds?: number;
  /** Aborted when the asking command goes away: the question is withdrawn. */
  signal?: AbortSignal;
  /** Paths the confined command can write: an asker found there is not run (it answers no). */
  writable?: readonly string[];
  /** The asker, resolved once when confine started (resolveAsker); else resolved now. */
  asker?: ResolvedAsker;
}

export interface AskResult {
  answer: Answer;
  /** Who answered: 'CONFINE_ASK', 'dialog', or 'nobody' (no way to ask). */
  by: 'CONFINE_ASK' | 'dialog' | 'nobody';
  /** Why the answer is no without anyone saying so (nobody to ask, the asker failed). */
  note?: string;
}

export const DIALOG_SECONDS = 10;
/** The most of a command line a dialog shows; past it the user sees that something is cut. */
const MAX_SHOWN = 2000;

/** The answer a CONFINE_ASK program printed: its first line, exactly; anything else is no. */
export function parseAnswer(stdout: string): Answer {
  const first = stdout.split('\n', 1)[0].trim();
  return first === 'once' || first === 'always' ? first : 'no';
}

// Characters that could make one command line look like another: controls, format characters
// (bidirectional overrides, zero-width joiners), line and paragraph separators, odd spaces.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;
const INVISIBLE_G = new RegExp(INVISIBLE.source, 'gu');

function quoteWord(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  if (!INVISIBLE.test(word)) return `'${word.replace(/'/g, `'\\''`)}'`;
  const escaped = word.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(INVISIBLE_G, (c) => {
    const code = c.codePointAt(0) as number;
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
  return `$'${escaped}'`;
}

/** The command line as a shell would take it back, one line, nothing hidden, cut if very long. */
export function displayCommandLine(argv: string[]): string {
  const line = argv.map(quoteWord).join(' ');
  if (line.length <= MAX_SHOWN) return line;
  return `${line.slice(0, MAX_SHOWN)}… (${line.length - MAX_SHOWN} more characters)`;
}

/** The text of the question, as every asker shows it. */
export function questionText(q: Question, seconds = DIALOG_SECONDS): string {
  const lines = [
    q.heading ?? DEFAULT_HEADING,
    '',
    displayCommandLine(q.argv),
    '',
    `in ${displayCommandLine([q.cwd])}`,
    ...whereLines(q),
  ];
  if (q.note) lines.push('', `Asked every time: ${q.note}.`);
  lines.push('', `Deny is chosen in ${seconds} seconds.`);
  return lines.join('\n');
}

/**
 * The JavaScript for Automation that asks on macOS: an NSAlert whose first (default) button,
 * Deny, counts down from `seconds` and is pressed at zero; then Allow once and, if offered,
 * Allow always. It prints once, always or no. The command line, directory and note come in as
 * arguments (argv of run()), never as text in the script. osascript's AppleScript `display
 * dialog` can give up after a time but cannot count down, hence Cocoa through the ObjC bridge.
 */
export function macDialogScript(seconds = DIALOG_SECONDS): string {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 600) throw new RangeError('seconds: 1 to 600');
  return `ObjC.import('Cocoa');
function run(argv) {
  var line = argv[0], dir = argv[1], note = argv[2], offerAlways = argv[3] === 'always';
  var left = ${seconds};
  var app = $.NSApplication.sharedApplication;
  app.setActivationPolicy($.NSApplicationActivationPolicyAccessory);
  var alert = $.NSAlert.alloc.init;
  alert.messageText = argv[4];
  alert.informativeText = line + '\\n\\nin ' + dir + (note ? '\\n\\nAsked every time: ' + note + '.' : '');
  alert.alertStyle = $.NSAlertStyleWarning;
  var deny = alert.addButtonWithTitle('Deny (' + left + ')');
  alert.addButtonWithTitle('Allow once');
  if (offerAlways) alert.addButtonWithTitle('Allow always');
  ObjC.registerSubclass({
    name: 'ConfineCountdown',
    methods: {
      'tick:': {
        types: ['void', ['id']],
        implementation: function (timer) {
          left -= 1;
          if (left <= 0) {
            timer.invalidate;
            deny.performClick($());
          } else {
            deny.title = 'Deny (' + left + ')';
          }
        }
      }
    }
  });
  var timer = $.NSTimer.timerWithTimeIntervalTargetSelectorUserInfoRepeats(1, $.ConfineCountdown.alloc.init, 'tick:', $(), true);
  $.NSRunLoop.currentRunLoop.addTimerForMode(timer, $.NSRunLoopCommonModes);
  app.activateIgnoringOtherApps(true);
  alert.window.level = $.NSFloatingWindowLevel;
  var response = alert.runModal;
  timer.invalidate;
  if (response == 1001) return 'once';
  if (response == 1002 && offerAlways) return 'always';
  return 'no';
}
`;
}

/** osascript's arguments for the macOS dialog (the program is /usr/bin/osascript). */
export function macDialogArgs(q: Question, seconds = DIALOG_SECONDS): string[] {
  // The first argument after the script is the command line, which starts with the tool's name,
  // so osascript cannot take it for an option.
  return ['-l', 'JavaScript', '-e', macDialogScript(seconds), displayCommandLine(q.argv), [displayCommandLine([q.cwd]), ...whereLines(q)].join('\n'), q.note ?? '', q.offerAlways ? 'always' : 'once', q.heading ?? DEFAULT_HEADING];
}

/** zenity's arguments: Deny is the default (--default-cancel) and is chosen at the timeout. */
export function zenityArgs(q: Question, seconds = DIALOG_SECONDS): string[] {
  const args = [
    '--question', '--no-markup', '--title=confine', '--width=560', `--text=${questionText(q, seconds)}`,
    '--ok-label=Allow once', '--cancel-label=Deny', '--default-cancel', `--timeout=${seconds}`,
  ];
  if (q.offerAlways) args.push('--extra-button=Allow always');
  return args;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * kdialog's arguments. Qt guesses whether text is markup, so the text is made markup on purpose
 * (<qt>) and escaped, and what the command wrote cannot style itself. Escape and closing the
 * window answer Cancel, which is Deny; kdialog has no timeout, so the broker ends it.
 */
export function kdialogArgs(q: Question, seconds = DIALOG_SECONDS): string[] {
  const text = `<qt>${escapeHtml(questionText(q, seconds)).replace(/\n/g, '<br>')}</qt>`;
  if (q.offerAlways) {
    return ['--title', 'confine', '--warningyesnocancel', text, '--yes-label', 'Allow once', '--no-label', 'Allow always', '--cancel-label', 'Deny'];
  }
  return ['--title', 'confine', '--warningyesno', text, '--yes-label', 'Allow once', '--no-label', 'Deny'];
}

export type AskerChoice =
  | { kind: 'program'; program: string }
  | { kind: 'osascript'; program: string }
  | { kind: 'zenity'; program: string }
  | { kind: 'kdialog'; program: string }
  | { kind: 'none'; why: string };


/** The asker and its program's absolute path (undefined: not found where it may be run from). */
export interface ResolvedAsker {
  choice: AskerChoice;
  file?: string;
}

/**
 * Who asks, and with which program: found once, as confine starts, never in a directory of
 * `untrusted` (where the command could put an asker that answers for it).
 */
export function resolveAsker(env: NodeJS.ProcessEnv, untrusted: readonly string[] = [], platform: NodeJS.Platform = process.platform): ResolvedAsker {
  const choice = chooseAsker(env, platform, untrusted);
  if (choice.kind === 'none') return { choice };
  return { choice, file: resolveProgram(choice.program, env.PATH, untrusted) };
}

/** Who asks, given confine's environment: CONFINE_ASK, else a dialog, else nobody. */
export function chooseAsker(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform, untrusted: readonly string[] = []): AskerChoice {
  if (env.CONFINE_ASK) return { kind: 'program', program: env.CONFINE_ASK };
  if (platform === 'darwin') {
    if (fs.existsSync('/usr/bin/osascript')) return { kind: 'osascript', program: '/usr/bin/osascript' };
    return { kind: 'none', why: 'no CONFINE_ASK, and /usr/bin/osascript is missing' };
  }
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) {
    return { kind: 'none', why: 'no CONFINE_ASK, and no desktop (DISPLAY and WAYLAND_DISPLAY are not set) for a dialog' };
  }
  const zenity = findOnPath('zenity', env.PATH, untrusted);
  if (zenity) return { kind: 'zenity', program: zenity };
  const kdialog = findOnPath('kdialog', env.PATH, untrusted);
  if (kdialog) return { kind: 'kdialog', program: kdialog };
  return { kind: 'none', why: 'no CONFINE_ASK, and neither zenity nor kdialog is installed for a dialog' };
}

interface ProgramResult {
  status: number | null;
  stdout: string;
  error?: string;
}

/** Runs an asker: no stdin, its stdout read (4 KiB at most), its stderr confine's. */
function runAsker(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number | undefined, signal?: AbortSignal): Promise<ProgramResult> {
  return new Promise((resolve) => {
    let out = '';
    let settled = false;
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const finish = (r: ProgramResult): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    // The asker and what it started (a script's children) go; its output is no longer read.
    const stop = (): void => {
      if (child.exitCode === null && child.signalCode === null) killTree(child.pid, 'SIGKILL');
      child.stdout.destroy();
    };
    const onAbort = (): void => {
      stop();
      finish({ status: null, stdout: '', error: 'the question was withdrawn' });
    };
    const timer = timeoutMs !== undefined ? setTimeout(() => {
      stop();
      finish({ status: null, stdout: '', error: 'no answer in time' });
    }, timeoutMs) : undefined;
    signal?.addEventListener('abort', onAbort);
    if (signal?.aborted) onAbort();
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (out.length < 4096) out += chunk.slice(0, 4096 - out.length);
    });
    child.on('error', (err) => finish({ status: null, stdout: '', error: err.message }));
    child.on('close', (status) => finish({ status, stdout: out }));
  });
}

/**
 * A program as execvp would find it, but only in absolute PATH entries and in none of `untrusted`;
 * undefined if not found there.
 */
export function resolveProgram(program: string, searchPath: string | undefined, untrusted: readonly string[] = []): string | undefined {
  if (program.includes('/')) {
    const file = path.resolve(program);
    return isUntrusted(file, untrusted) ? undefined : file;
  }
  return findOnPath(program, searchPath, untrusted);
}

/** Whether a file, or what it links to, lies under one of the writable paths. */
export function isWritable(file: string, writable: readonly string[]): boolean {
  let real = file;
  try {
    real = fs.realpathSync(file);
  } catch {
    /* missing: running it fails, which is no */
  }
  if (!isInsideAny(real, writable, 'resolved') && !isInsideAny(file, writable, 'lexical')) return false;
  // Inside a writable path, but the command (this user, with fewer rights) cannot change it: a
  // root-owned installation or checkout under /tmp or /var/tmp.
  return replaceableByUser(file);
}

/** Asks; resolves with the answer, which is no unless someone said once or always. */
export async function ask(q: Question, options: AskOptions): Promise<AskResult> {
  const seconds = options.seconds ?? DIALOG_SECONDS;
  const { choice, file } = options.asker ?? resolveAsker(options.env, [], options.platform);
  if (choice.kind === 'none') return { answer: 'no', by: 'nobody', note: choice.why };
  const by = choice.kind === 'program' ? 'CONFINE_ASK' : 'dialog';
  // The asker is run by its absolute path, found as confine started; the command could make an
  // asker it can write answer for it, so one there is not run.
  if (file === undefined) return { answer: 'no', by, note: `${choice.program} is not found outside what the command can write` };
  if (isWritable(file, options.writable ?? [])) return { answer: 'no', by, note: `${by === 'CONFINE_ASK' ? 'CONFINE_ASK' : 'the dialog'} (${file}) is where the confined command can write` };
  if (choice.kind === 'program') {
    // The program gets the command line as its arguments, and where it would run in CONFINE_ASK_DIR.
    // Where it acts, as the dialog shows it: CONFINE_ASK_REPOSITORY, and CONFINE_ASK_REMOTES (a
    // `NAME URL` line each, quoted as a shell would take them back).
    const env = {
      ...options.env,
      CONFINE_ASK_DIR: q.cwd,
      CONFINE_ASK_ALWAYS: q.offerAlways ? '1' : '0',
      CONFINE_ASK_REPOSITORY: q.repository ?? '',
      CONFINE_ASK_REMOTES: remoteWords(q).join('\n'),
      CONFINE_ASK_VARIABLES: (q.variables ?? []).map((v) => displayCommandLine([v])).join('\n'),
    };
    const r = await runAsker(file, q.argv, env, undefined, options.signal);
    if (r.error !== undefined) return { answer: 'no', by: 'CONFINE_ASK', note: `CONFINE_ASK (${choice.program}) failed: ${r.error}` };
    if (r.status !== 0) return { answer: 'no', by: 'CONFINE_ASK', note: `CONFINE_ASK (${choice.program}) exited with status ${r.status}` };
    const answer = parseAnswer(r.stdout);
    return { answer: answer === 'always' && !q.offerAlways ? 'once' : answer, by: 'CONFINE_ASK' };
  }
  // A dialog: it answers Deny itself at the timeout, and the broker's own timer is the backstop.
  const args = choice.kind === 'osascript' ? macDialogArgs(q, seconds) : choice.kind === 'zenity' ? zenityArgs(q, seconds) : kdialogArgs(q, seconds);
  // kdialog has no timeout of its own: the broker's timer is its countdown.
  const limit = choice.kind === 'kdialog' ? seconds : seconds + 5;
  const r = await runAsker(file, args, options.env, limit * 1000, options.signal);
  if (r.error !== undefined) return { answer: 'no', by: 'dialog', note: r.error };
  let answer: Answer = 'no';
  if (choice.kind === 'osascript') answer = parseAnswer(r.stdout);
  else if (choice.kind === 'zenity') answer = r.status === 0 ? 'once' : r.stdout.trim() === 'Allow always' ? 'always' : 'no';
  else if (q.offerAlways) answer = r.status === 0 ? 'once' : r.status === 1 ? 'always' : 'no';
  else answer = r.status === 0 ? 'once' : 'no';
  return { answer: answer === 'always' && !q.offerAlways ? 'once' : answer, by: 'dialog' };
}
