// Presets for the coding agents people run under confine: the command, the paths of the home
// directory it needs beyond the SPEC's defaults, and the one secret-looking variable it needs to
// keep (its API key), which confine otherwise removes from the environment. A preset is chosen
// with --preset NAME, or by CMD's name when none is given.
//
// Paths are written `$VAR/rest|~/fallback`: the first form whose variable is set to an absolute
// path (the XDG Base Directory rule: a relative value is ignored), else the fallback in the home.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { usageError } from '../errors';
import { isInside } from '../paths/inside';

export interface Preset {
  name: string;
  /** The command run when none is given, and the name that selects the preset. */
  command: string;
  describe: string;
  /** Home paths it may read (config). */
  readable: readonly string[];
  /** Home paths it may write (state, caches, sessions). */
  writable: readonly string[];
  /** Variables kept although they look secret: the agent's own key. */
  keepEnv: readonly string[];
}

export const PRESETS: readonly Preset[] = [
  {
    name: 'claude',
    command: 'claude',
    describe: 'Claude Code: ~/.claude writable, keeps ANTHROPIC_API_KEY',
    readable: [],
    // Sessions, settings, todos; CLAUDE_CONFIG_DIR moves it.
    writable: ['$CLAUDE_CONFIG_DIR|~/.claude'],
    keepEnv: ['ANTHROPIC_API_KEY'],
  },
  {
    name: 'codex',
    command: 'codex',
    describe: 'OpenAI Codex CLI: ~/.codex writable, keeps OPENAI_API_KEY',
    readable: [],
    // Config, auth, sessions and logs; CODEX_HOME moves it.
    writable: ['$CODEX_HOME|~/.codex'],
    keepEnv: ['OPENAI_API_KEY'],
  },
  {
    name: 'opencode',
    command: 'opencode',
    describe: 'opencode: its config read-only, its cache, data and state writable (XDG directories)',
    // Its configuration only: the agent must not rewrite its own permissions.
    readable: ['$XDG_CONFIG_HOME/opencode|~/.config/opencode'],
    writable: ['$XDG_CACHE_HOME/opencode|~/.cache/opencode', '$XDG_DATA_HOME/opencode|~/.local/share/opencode', '$XDG_STATE_HOME/opencode|~/.local/state/opencode'],
    keepEnv: [],
  },
];

export function presetNames(): string[] {
  return PRESETS.map((p) => p.name);
}

/** The preset of that name; an unknown name is a usage error (exit 2) listing the known ones. */
export function getPreset(name: string): Preset {
  const preset = PRESETS.find((p) => p.name === name);
  if (!preset) {
    throw usageError(`--preset: unknown preset '${name}': the known presets are ${presetNames().join(', ')} (or none, for no preset)`);
  }
  return preset;
}

/** The preset whose command is CMD's name (`/usr/local/bin/claude` -> claude), if any. */
export function presetForCommand(command: string | undefined): Preset | undefined {
  if (!command) return undefined;
  const base = path.basename(command);
  return PRESETS.find((p) => p.command === base);
}

/** Expands one `$VAR/rest|~/fallback` path. Pure: the home and environment are given. */
export function expandPresetPath(spec: string, home: string, env: Readonly<Record<string, string | undefined>>): string {
  for (const alt of spec.split('|')) {
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*)(\/.*)?$/.exec(alt);
    if (m) {
      const value = env[m[1]];
      if (value && path.posix.isAbsolute(value)) return path.posix.join(value, m[2] ?? '');
      continue;
    }
    if (alt === '~') return home;
    if (alt.startsWith('~/')) return path.posix.join(home, alt.slice(2));
    if (path.posix.isAbsolute(alt)) return alt;
  }
  throw new Error(`preset path '${spec}' has no fallback`); // a bug in PRESETS, not the user's
}

export interface ResolvedPreset {
  name: string;
  command: string;
  readable: string[];
  writable: string[];
  keepEnv: string[];
  /** How it was chosen, for the note on stderr. */
  chosen: 'explicit' | 'by-command';
}

/**
 * Which preset applies: the one named by --preset, else the one whose command is CMD's name,
 * else none. `none` as a name turns the choice by name off.
 */
export function choosePreset(
  explicit: string | undefined,
  command: string | undefined,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): ResolvedPreset | undefined {
  if (explicit === 'none') return undefined;
  const preset = explicit !== undefined ? getPreset(explicit) : presetForCommand(command);
  if (!preset) return undefined;
  return {
    name: preset.name,
    command: preset.command,
    readable: preset.readable.map((p) => expandPresetPath(p, home, env)),
    writable: preset.writable.map((p) => expandPresetPath(p, home, env)),
    keepEnv: [...preset.keepEnv],
    chosen: explicit !== undefined ? 'explicit' : 'by-command',
  };
}

/** The note confine prints on stderr when it applies a preset. */
export function presetNote(preset: ResolvedPreset, home: string): string {
  const short = (p: string) => (p === home ? '~' : isInside(p, home, 'lexical') ? `~/${p.slice(home.length + 1)}` : p);
  const parts = [
    ...preset.writable.map((p) => `${short(p)} writable`),
    ...preset.readable.map((p) => `${short(p)} readable`),
    ...preset.keepEnv.map((v) => `keeps ${v}`),
  ];
  const why = preset.chosen === 'by-command' ? `; --preset none to not` : '';
  return `using the ${preset.name} preset (${parts.join(', ')}${why})`;
}

/**
 * Makes the preset's writable directories that do not exist yet (mode 0700), so that an agent
 * run for the first time can keep its state: a jail grants only paths that exist. Only paths in
 * the home directory are made.
 */
export function ensurePresetDirs(preset: ResolvedPreset, home: string): void {
  for (const p of preset.writable) {
    if (p === home || !isInside(p, home, 'lexical')) continue;
    fs.mkdirSync(p, { recursive: true, mode: 0o700 });
  }
}
