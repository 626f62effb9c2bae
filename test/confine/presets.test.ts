import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { choosePreset, ensurePresetDirs, expandPresetPath, getPreset, presetForCommand, presetNames, presetNote } from '../../src/confine/presets';
import { ArbError } from '../../src/errors';

const HOME = '/home/u';

describe('presets', () => {
  it('knows claude, codex and opencode', () => {
    expect(presetNames()).toEqual(['claude', 'codex', 'opencode']);
  });

  it('claude: command claude, ~/.claude writable, ~/.claude.json through a copy there, keeps its keys', () => {
    expect(choosePreset('claude', undefined, HOME, {})).toEqual({
      name: 'claude',
      command: 'claude',
      readable: [],
      writable: ['/home/u/.claude'],
      ifExists: [],
      copiedFile: { file: '/home/u/.claude.json', dir: '/home/u/.claude', variable: 'CLAUDE_CONFIG_DIR' },
      keepEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
      chosen: 'explicit',
    });
    // CLAUDE_CONFIG_DIR set: Claude Code keeps .claude.json in it, writable already; no copy.
    const moved = choosePreset('claude', undefined, HOME, { CLAUDE_CONFIG_DIR: '/data/claude' });
    expect(moved?.writable).toEqual(['/data/claude']);
    expect(moved?.copiedFile).toBeUndefined();
  });

  it('codex: ~/.codex writable (or $CODEX_HOME), keeps OPENAI_API_KEY', () => {
    const p = choosePreset('codex', undefined, HOME, {});
    expect(p).toMatchObject({ command: 'codex', writable: ['/home/u/.codex'], keepEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'] });
    expect(choosePreset('codex', undefined, HOME, { CODEX_HOME: '/c' })?.writable).toEqual(['/c']);
  });

  it("opencode: config, data, state and cache writable, under the XDG directories; its providers' keys kept", () => {
    const p = choosePreset('opencode', undefined, HOME, {});
    expect(p).toMatchObject({
      command: 'opencode',
      readable: [],
      writable: ['/home/u/.config/opencode', '/home/u/.local/share/opencode', '/home/u/.local/state/opencode', '/home/u/.cache/opencode', '/home/u/.opencode'],
      // Its installer's directory, which it writes at start, only where it is installed so.
      ifExists: ['/home/u/.opencode'],
    });
    expect(p?.keepEnv).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'OPENROUTER_API_KEY', 'GEMINI_API_KEY', 'OPENCODE_API_KEY']));
    const xdg = { XDG_CONFIG_HOME: '/x/config', XDG_CACHE_HOME: '/x/cache', XDG_DATA_HOME: '/x/data', XDG_STATE_HOME: '/x/state' };
    expect(choosePreset('opencode', undefined, HOME, xdg)).toMatchObject({
      writable: ['/x/config/opencode', '/x/data/opencode', '/x/state/opencode', '/x/cache/opencode', '/home/u/.opencode'],
    });
    // A relative XDG value is ignored, as the XDG Base Directory spec says.
    expect(choosePreset('opencode', undefined, HOME, { XDG_CACHE_HOME: 'cache' })?.writable[3]).toBe('/home/u/.cache/opencode');
  });

  it("is applied by CMD's name when none is given, and not otherwise", () => {
    expect(choosePreset(undefined, 'claude', HOME, {})).toMatchObject({ name: 'claude', chosen: 'by-command' });
    expect(choosePreset(undefined, '/usr/local/bin/codex', HOME, {})).toMatchObject({ name: 'codex' });
    expect(choosePreset(undefined, 'python3', HOME, {})).toBeUndefined();
    expect(choosePreset(undefined, 'claude-other', HOME, {})).toBeUndefined();
    expect(choosePreset(undefined, undefined, HOME, {})).toBeUndefined();
    // An explicit preset wins over the command's name; `none` turns the choice off.
    expect(choosePreset('codex', 'claude', HOME, {})).toMatchObject({ name: 'codex', chosen: 'explicit' });
    expect(choosePreset('none', 'claude', HOME, {})).toBeUndefined();
    expect(presetForCommand('./opencode')?.name).toBe('opencode');
  });

  it('refuses an unknown preset with a usage error listing the known ones', () => {
    let err: unknown;
    try {
      getPreset('gemini');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ArbError);
    expect(err).toMatchObject({ code: 'ARB_USAGE', exitCode: 2 });
    expect((err as Error).message).toBe("--preset: unknown preset 'gemini': the known presets are claude, codex, opencode (or none, for no preset)");
  });

  it('says what it applies, what is kept, which keys (those set), and how to turn an automatic choice off', () => {
    expect(presetNote(choosePreset(undefined, 'claude', HOME, {})!, HOME, { ANTHROPIC_API_KEY: 'sk-x' })).toBe(
      'using the claude preset (~/.claude writable, kept after it exits; ~/.claude.json through a copy in ~/.claude (CLAUDE_CONFIG_DIR), copied back when it exits; keeps ANTHROPIC_API_KEY; --preset none to not)',
    );
    expect(presetNote(choosePreset('opencode', undefined, HOME, {})!, HOME, { OPENROUTER_API_KEY: 'k', OPENAI_API_KEY: '' })).toBe(
      'using the opencode preset (~/.config/opencode, ~/.local/share/opencode, ~/.local/state/opencode, ~/.cache/opencode writable, kept after it exits; keeps OPENROUTER_API_KEY)',
    );
    expect(presetNote(choosePreset('claude', undefined, HOME, { CLAUDE_CONFIG_DIR: '/data/c' })!, HOME)).toBe('using the claude preset (/data/c writable, kept after it exits)');
  });

  it('expandPresetPath takes the first alternative that applies', () => {
    expect(expandPresetPath('$A/x|$B/y|~/z', HOME, { B: '/b' })).toBe('/b/y');
    expect(expandPresetPath('$A/x|~', HOME, {})).toBe(HOME);
  });

  it('ensurePresetDirs makes missing writable directories in the home, private, not those granted only where they are', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-preset-'));
    try {
      const p = choosePreset('opencode', undefined, home, { XDG_DATA_HOME: '/nonexistent-outside-home' })!;
      ensurePresetDirs(p, home);
      expect(fs.statSync(path.join(home, '.cache/opencode')).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.join(home, '.config/opencode')).mode & 0o777).toBe(0o700);
      expect(fs.existsSync(path.join(home, '.local/state/opencode'))).toBe(true);
      // Outside the home nothing is made; nor is ~/.opencode, granted only where it is.
      expect(fs.existsSync('/nonexistent-outside-home')).toBe(false);
      expect(fs.existsSync(path.join(home, '.opencode'))).toBe(false);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
