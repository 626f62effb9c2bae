// The terminal keeps working for a confined command: an interactive shell with its job control,
// Ctrl-C delivered once, resizing, and Ctrl-Z stopping confine and its command together. Driven
// through a pseudo-terminal (pty-driver.py), as the unprivileged test user, both when confine
// becomes the command (Landlock alone) and when it waits for it (the hardening layers).
import * as path from 'node:path';

import { CLI, REPO_ROOT, testEnv, itIf } from '../helpers/env';
import { asUser } from '../helpers/run';
import { removeUserArea, userDir, userFile } from './confine-helpers';

const env = testEnv();
const haveUser = Boolean(env.user && env.userWork);
const test = itIf(haveUser, env.userMissing ?? 'no test user');
const DRIVER = path.join(REPO_ROOT, 'test', 'confine', 'pty-driver.py');

type Step = ['expect', string] | ['send', string] | ['resize', number, number] | ['sleep', number];

interface PtyResult {
  status: number;
  output: string;
  failed: Step | null;
}

function onTerminal(steps: Step[], argv: string[], modeEnv: NodeJS.ProcessEnv): PtyResult {
  const r = asUser('python3', [DRIVER, JSON.stringify(steps), ...argv], { env: { CLI, ...modeEnv }, timeout: 60_000 });
  if (r.status !== 0) throw new Error(`pty driver failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as PtyResult;
}

/** Fails with the transcript when a step timed out or the program did not exit. */
function expectCompleted(r: PtyResult): void {
  if (r.failed) throw new Error(`step ${JSON.stringify(r.failed)} did not complete; the terminal showed:\n${r.output}`);
}

afterAll(removeUserArea);

const MODES: [string, NodeJS.ProcessEnv][] = [
  ['Landlock alone: confine becomes the command', { ARB_CONFINE_NO_NAMESPACES: '1' }],
  ['with the hardening layers: confine waits', {}],
];

describe.each(MODES)('arb confine on a terminal (%s)', (_label, modeEnv) => {
  let project: string;
  beforeAll(() => {
    if (!haveUser) return;
    project = userDir('tty');
    // Counts the SIGINTs it gets in a second after saying it is ready; prints its size on SIGWINCH.
    userFile(
      path.join(project, 'signals.py'),
      [
        'import os, signal, sys, time',
        'count = 0',
        'def on_int(*a):',
        '    global count',
        '    count += 1',
        'signal.signal(signal.SIGINT, on_int)',
        'resized = False',
        'def on_winch(*a):',
        '    global resized',
        '    resized = True',
        'signal.signal(signal.SIGWINCH, on_winch)',
        "print('ready', flush=True)",
        'end = time.time() + 1.5',
        'while time.time() < end:',
        '    time.sleep(0.05)',
        '    if resized:',
        "        print('size=%dx%d' % os.get_terminal_size(), flush=True)",
        '        resized = False',
        "print('sigint=%d' % count, flush=True)",
        '',
      ].join('\n'),
    );
  });

  test('an interactive shell runs confined, with its job control, and exits with its status', () => {
    const r = onTerminal(
      [
        ['expect', '\\$ $'],
        ['send', 'echo sandboxed=$CLAUDE_CODE_SANDBOXED\r'],
        ['expect', 'sandboxed=1'],
        ['send', 'cat ~/.ssh/id_ed25519\r'],
        ['expect', '(Permission denied|No such file or directory)'],
        ['send', 'sleep 30\r'],
        ['sleep', 0.5],
        ['send', '\x1a'],
        ['expect', 'Stopped'],
        ['expect', '\\$ $'],
        ['send', 'jobs\r'],
        ['expect', 'sleep 30'],
        ['send', 'fg\r'],
        ['expect', 'sleep 30'],
        ['sleep', 0.3],
        ['send', '\x03'],
        ['expect', '\\$ $'],
        ['send', 'exit 3\r'],
      ],
      ['node', CLI, 'confine', '-d', project, '--', 'bash', '--norc', '--noprofile', '-i'],
      modeEnv,
    );
    expectCompleted(r);
    expect(r.output).not.toContain('FAKE-SSH');
    expect(r.output).not.toMatch(/no job control/);
    expect(r.status).toBe(3);
  });

  test('Ctrl-C reaches the command once, and resizing the terminal reaches it', () => {
    const r = onTerminal(
      [['expect', 'ready'], ['send', '\x03'], ['resize', 40, 100], ['expect', 'size=100x40'], ['expect', 'sigint=\\d']],
      ['node', CLI, 'confine', '-d', project, '--', 'python3', 'signals.py'],
      modeEnv,
    );
    expectCompleted(r);
    expect(r.output).toMatch(/sigint=1\b/);
    expect(r.status).toBe(0);
  });

  test('Ctrl-C ends a command that does not catch it, and confine with it', () => {
    const r = onTerminal(
      // The pause lets sh start sleep: a Ctrl-C before that would find only sh, which defers it.
      [['expect', 'ready'], ['sleep', 0.5], ['send', '\x03']],
      ['node', CLI, 'confine', '-d', project, '--', 'sh', '-c', 'echo ready; sleep 30; echo not-interrupted'],
      modeEnv,
    );
    expectCompleted(r);
    expect(r.output).not.toContain('not-interrupted');
    expect(r.status).toBe(130);
  });

  test('Ctrl-Z stops confine and the command; fg in the shell outside resumes both', () => {
    const r = onTerminal(
      [
        ['expect', '\\$ $'],
        // The marker is split in the command line, so that its echo does not match.
        ['send', `node "$CLI" confine -d ${project} -- sh -c 'echo re""ady; read line; echo got=$line'\r`],
        ['expect', 'ready'],
        ['send', '\x1a'],
        ['expect', 'Stopped'],
        // The shell's prompt again: typed before it, `fg` can lose its first letter while bash
        // takes the terminal back.
        ['expect', '\\$ $'],
        ['send', 'fg\r'],
        ['sleep', 0.5],
        ['send', 'hello\r'],
        ['expect', 'got=hello'],
        ['expect', '\\$ $'],
        ['send', 'exit $?\r'],
      ],
      ['bash', '--norc', '--noprofile', '-i'],
      modeEnv,
    );
    expectCompleted(r);
    expect(r.status).toBe(0);
  });
});
