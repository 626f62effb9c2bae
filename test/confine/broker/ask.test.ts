// Asking: CONFINE_ASK's answers, the dialogs' arguments (built by pure functions: the macOS one
// cannot run here), and a command line shown so that it cannot pass for another.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

import {
  Question, ask, chooseAsker, displayCommandLine, isWritable, kdialogArgs, macDialogArgs, macDialogScript, parseAnswer, questionText, zenityArgs,
} from '../../../src/confine/broker/ask';

const q: Question = { argv: ['gh', 'pr', 'create', '--title', 'Fix it'], cwd: '/work/p', offerAlways: true };

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-ask-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

describe('parseAnswer', () => {
  it('takes once, always or no on the first line; anything else is no', () => {
    expect(parseAnswer('once\n')).toBe('once');
    expect(parseAnswer('  always  \nmore')).toBe('always');
    expect(parseAnswer('no')).toBe('no');
    expect(parseAnswer('yes')).toBe('no');
    expect(parseAnswer('Once')).toBe('no');
    expect(parseAnswer('')).toBe('no');
  });
});

describe('displayCommandLine', () => {
  it('quotes words as a shell would take them back', () => {
    expect(displayCommandLine(['gh', 'pr', 'create', '--title', "it's fixed"])).toBe(`gh pr create --title 'it'\\''s fixed'`);
    expect(displayCommandLine(['gh', ''])).toBe("gh ''");
  });

  it('escapes what could hide or fake part of the line', () => {
    expect(displayCommandLine(['gh', 'a\nb'])).toBe("gh $'a\\nb'");
    expect(displayCommandLine(['gh', 'pr\u202eetaerc'])).toBe("gh $'pr\\u{202e}etaerc'");
    expect(displayCommandLine(['gh', 'a\u00a0b'])).toBe("gh $'a\\xa0b'");
    expect(displayCommandLine(['gh', '\x1b[2K'])).toBe("gh $'\\x1b[2K'");
  });

  it('cuts a very long line and says so', () => {
    expect(displayCommandLine(['gh', 'x'.repeat(5000)])).toMatch(/… \(\d+ more characters\)$/);
  });
});

describe('the macOS dialog', () => {
  it('is JavaScript that counts Deny down and presses it at zero', () => {
    const s = macDialogScript(10);
    expect(() => new vm.Script(s)).not.toThrow();
    expect(s).toContain('var left = 10;');
    expect(s).toMatch(/addButtonWithTitle\('Deny \(' \+ left \+ '\)'\)[\s\S]*addButtonWithTitle\('Allow once'\)/);
    expect(s).toContain('deny.performClick');
    expect(s).toContain('NSRunLoopCommonModes');
    expect(() => macDialogScript(0)).toThrow(RangeError);
    expect(() => macDialogScript(1.5)).toThrow(RangeError);
  });

  it('gets the command line as an argument, never in its text', () => {
    const evil: Question = { argv: ['gh', "'); doShellScript('x"], cwd: '/w', offerAlways: false, note: 'gh api can make any request' };
    const args = macDialogArgs(evil);
    expect(args.slice(0, 3)).toEqual(['-l', 'JavaScript', '-e']);
    expect(args[3]).toBe(macDialogScript(10));
    expect(args.slice(4)).toEqual([displayCommandLine(evil.argv), '/w', 'gh api can make any request', 'once', 'A confined command asks to run, outside the sandbox:']);
    expect(args[4].startsWith('gh ')).toBe(true);
  });

  it('takes another heading as an argument too (--allow-host asks about hosts)', () => {
    const host: Question = { argv: ['connect', 'example.org'], cwd: '/w', offerAlways: true, heading: 'A confined command asks to reach a host:' };
    expect(macDialogArgs(host)[8]).toBe('A confined command asks to reach a host:');
    expect(macDialogScript(10)).not.toContain('example.org');
    expect(questionText(host).split('\n')[0]).toBe('A confined command asks to reach a host:');
  });
});

describe('the Linux dialogs', () => {
  it('zenity: Deny is the default and is chosen at the timeout; no markup', () => {
    const args = zenityArgs(q);
    expect(args).toEqual(expect.arrayContaining(['--question', '--no-markup', '--default-cancel', '--timeout=10', '--cancel-label=Deny', '--ok-label=Allow once', '--extra-button=Allow always']));
    expect(args.find((a) => a.startsWith('--text='))).toContain('gh pr create --title \'Fix it\'');
    expect(zenityArgs({ ...q, offerAlways: false })).not.toContain('--extra-button=Allow always');
  });

  it('kdialog: the text is escaped markup, and Cancel (Escape) is Deny', () => {
    const args = kdialogArgs({ ...q, argv: ['gh', '<b>pr</b>'] });
    const text = args[3];
    expect(text.startsWith('<qt>')).toBe(true);
    expect(text).toContain('&lt;b&gt;pr&lt;/b&gt;');
    expect(text).not.toContain('<b>');
    expect(args).toEqual(expect.arrayContaining(['--warningyesnocancel', '--cancel-label', 'Deny']));
  });

  it('the question says where, why it is asked every time, and when Deny comes', () => {
    const text = questionText({ ...q, offerAlways: false, note: 'gh api can make any request with your token' });
    expect(text).toContain("gh pr create --title 'Fix it'");
    expect(text).toContain('in /work/p');
    expect(text).toContain('Asked every time: gh api can make any request with your token.');
    expect(text).toContain('Deny is chosen in 10 seconds.');
  });
});

describe('chooseAsker', () => {
  it('prefers CONFINE_ASK, then a dialog, else nobody', () => {
    expect(chooseAsker({ CONFINE_ASK: '/bin/ask', DISPLAY: ':0' }, 'linux')).toEqual({ kind: 'program', program: '/bin/ask' });
    expect(chooseAsker({}, 'linux')).toMatchObject({ kind: 'none', why: expect.stringContaining('DISPLAY') });
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    expect(chooseAsker({ DISPLAY: ':0', PATH: bin }, 'linux')).toMatchObject({ kind: 'none', why: expect.stringContaining('zenity') });
    fs.writeFileSync(path.join(bin, 'kdialog'), '#!/bin/sh\n', { mode: 0o755 });
    expect(chooseAsker({ WAYLAND_DISPLAY: 'wayland-0', PATH: bin }, 'linux')).toMatchObject({ kind: 'kdialog' });
    fs.writeFileSync(path.join(bin, 'zenity'), '#!/bin/sh\n', { mode: 0o755 });
    expect(chooseAsker({ DISPLAY: ':0', PATH: bin }, 'linux')).toEqual({ kind: 'zenity', program: path.join(bin, 'zenity') });
  });
});

describe('ask', () => {
  it('runs CONFINE_ASK with the command line and takes its answer', async () => {
    const log = path.join(dir, 'asked.log');
    for (const answer of ['once', 'always', 'no', 'sure']) {
      const prog = script(`ask-${answer}`, `printf '%s|' "$@" >> ${log}; echo "$CONFINE_ASK_DIR" >> ${log}; echo ${answer}`);
      const r = await ask(q, { env: { CONFINE_ASK: prog, PATH: process.env.PATH } });
      expect(r).toEqual({ answer: answer === 'sure' ? 'no' : answer, by: 'CONFINE_ASK' });
    }
    expect(fs.readFileSync(log, 'utf8').split('\n')[0]).toBe('gh|pr|create|--title|Fix it|/work/p');
  });

  it('does not run an asker where the confined command can write (it would answer for itself)', async () => {
    const prog = script('ask-writable', 'echo always');
    expect(await ask(q, { env: { CONFINE_ASK: prog }, writable: [dir] })).toMatchObject({ answer: 'no', note: expect.stringContaining('where the confined command can write') });
    const link = path.join(os.tmpdir(), `arb-ask-link-${process.pid}`);
    fs.symlinkSync(prog, link);
    try {
      expect((await ask(q, { env: { CONFINE_ASK: link }, writable: [dir] })).answer).toBe('no');
    } finally {
      fs.rmSync(link);
    }
    const bin = path.join(dir, 'wbin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'zenity'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    expect((await ask(q, { env: { DISPLAY: ':0', PATH: bin }, platform: 'linux', writable: [bin] })).answer).toBe('no');
    expect((await ask(q, { env: { DISPLAY: ':0', PATH: bin }, platform: 'linux', writable: ['/elsewhere'] })).answer).toBe('once');
  });

  it('takes always as once where always cannot be kept', async () => {
    const prog = script('ask-always2', 'echo always');
    expect((await ask({ ...q, offerAlways: false }, { env: { CONFINE_ASK: prog } })).answer).toBe('once');
  });

  it('is no when CONFINE_ASK fails, is missing, or nobody can be asked', async () => {
    expect(await ask(q, { env: { CONFINE_ASK: script('ask-fail', 'echo once; exit 3') } })).toMatchObject({ answer: 'no', note: expect.stringContaining('status 3') });
    expect(await ask(q, { env: { CONFINE_ASK: path.join(dir, 'missing') } })).toMatchObject({ answer: 'no' });
    expect(await ask(q, { env: {}, platform: 'linux' })).toMatchObject({ answer: 'no', by: 'nobody' });
  });

  it('is withdrawn (no) when the asking command goes away', async () => {
    const marker = path.join(dir, 'slow-ask-ended');
    const prog = script('ask-slow', `sleep 30; touch ${marker}; echo once`);
    const ac = new AbortController();
    const pending = ask(q, { env: { CONFINE_ASK: prog }, signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    expect(await pending).toMatchObject({ answer: 'no' });
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('zenity: Allow always, Allow once, and the timeout', async () => {
    const bin = path.join(dir, 'zbin');
    fs.mkdirSync(bin, { recursive: true });
    const z = (body: string) => fs.writeFileSync(path.join(bin, 'zenity'), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    const env = { DISPLAY: ':0', PATH: `${bin}:/usr/bin:/bin` };
    z('exit 0');
    expect((await ask(q, { env, platform: 'linux' })).answer).toBe('once');
    z('echo "Allow always"; exit 1');
    expect((await ask(q, { env, platform: 'linux' })).answer).toBe('always');
    z('exit 5');
    expect((await ask(q, { env, platform: 'linux' })).answer).toBe('no');
  });

  it('kdialog: ended by the broker when its time is up', async () => {
    const bin = path.join(dir, 'kbin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'kdialog'), '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    const started = Date.now();
    const r = await ask(q, { env: { DISPLAY: ':0', PATH: `${bin}:/usr/bin:/bin` }, platform: 'linux', seconds: 1 });
    expect(r.answer).toBe('no');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('isWritable', () => {
  it('counts a folder whose name starts with two dots as inside the writable path (/w/..bin is in /w)', () => {
    expect(isWritable('/w/..bin/git', ['/w'])).toBe(true);
    expect(isWritable('/w/../bin/git', ['/w'])).toBe(false);
    expect(isWritable('/w2/git', ['/w'])).toBe(false);
  });
});

describe('where the tool acts, in the question', () => {
  it('shows the repository and each remote, quoted so that nothing is hidden', () => {
    const where: Question = { ...q, repository: '/work/p', remotes: ['origin https://github.com/o/r.git', 'fork https://evil.example/x\u202e.git'] };
    const text = questionText(where);
    expect(text).toContain('in /work/p\nrepository /work/p\nremote origin https://github.com/o/r.git\nremote fork $\'https://evil.example/x\\u{202e}.git\'');
    expect(questionText({ ...q, repository: '/work/p', remotes: [] })).toContain('repository /work/p\nno remote');
    expect(questionText({ ...q, repository: '/w', remotes: ['branch:topic https://github.com/a/x.git'] })).toContain('repository /w\nbranch topic pushes to https://github.com/a/x.git');
    expect(questionText(q)).not.toContain('repository');
    expect(questionText({ ...q, variables: ['GH_REPO=attacker/x'], repository: '/w' })).toContain('in /work/p\nwith GH_REPO=attacker/x\nrepository /w');
  });
});
