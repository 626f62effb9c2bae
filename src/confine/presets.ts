// Presets for the coding agents people run under confine: the command, the paths of the home
// directory it needs beyond the SPEC's defaults (writable, so what it saves is kept as it is
// outside), and the secret-looking variables it needs to keep (its API keys), which confine
// otherwise removes from the environment. A preset is chosen
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
  /** Home directories it may write (state, caches, sessions): kept after it exits. */
  writable: readonly string[];
  /**
   * A state file directly in the home directory that the agent keeps in `dir` instead when
   * `variable` names that directory (state-copy.ts): confine copies it in and back. Applied only
   * when the variable is not set already (then the file lives in a writable directory anyway).
   */
  copiedFile?: { file: string; dir: string; variable: string };
  /** Variables kept although they look secret: the agent's own key. */
  keepEnv: readonly string[];
  /** Linux: the jail it runs in when no --jail is given, and why (the agent's own sandbox). */
  linuxJail?: { jail: 'bwrap'; why: string };
}

/**
 * Why Codex runs in the bwrap jail: its own sandbox (bubblewrap, `codex exec`'s default
 * workspace-write) makes a user namespace and mounts in it. Landlock forbids any mount(2) or
 * pivot_root(2) to a thread it confines, whatever the rights granted (and grants /proc only
 * reading, so writing /proc/self/uid_map fails first: `setting up uid map: Permission denied`).
 * In the bwrap jail, namespaces and read-only binds confine the agent and its bubblewrap nests
 * inside: both sandboxes hold.
 */
export const CODEX_NESTING =
  "Codex's own sandbox (bubblewrap) cannot run inside Landlock, which forbids mounting to every process it confines";

export const PRESETS: readonly Preset[] = [
  {
    name: 'claude',
    command: 'claude',
    describe: 'Claude Code: ~/.claude and ~/.claude.json writable (kept), keeps its API key',
    readable: [],
    // Sessions, settings, todos, credentials; CLAUDE_CONFIG_DIR moves it.
    writable: ['$CLAUDE_CONFIG_DIR|~/.claude'],
    // Its global state: MCP servers (`claude mcp add`), projects, onboarding. Claude Code cannot
    // rewrite it in the home directory (it makes a lock and a temporary file beside it), so it
    // gets a copy in ~/.claude (CLAUDE_CONFIG_DIR), copied back when it exits. The file itself is
    // readable by no confined command: MCP servers' tokens live there.
    copiedFile: { file: '~/.claude.json', dir: '~/.claude', variable: 'CLAUDE_CONFIG_DIR' },
    keepEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  },
  {
    name: 'codex',
    command: 'codex',
    describe: 'OpenAI Codex CLI: ~/.codex writable (kept), keeps its API key',
    readable: [],
    // Config, auth, sessions and logs; CODEX_HOME moves it.
    writable: ['$CODEX_HOME|~/.codex'],
    keepEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    linuxJail: { jail: 'bwrap', why: CODEX_NESTING },
  },
  {
    name: 'opencode',
    command: 'opencode',
    describe: "opencode: its config, data, state and cache writable (kept), keeps its providers' API keys",
    readable: [],
    // opencode writes its config directory itself (a package.json and its plugins' modules at
    // the first start), so it is writable as it is outside: the agent can change its own
    // settings there, as it could without confine. Data holds auth.json (`opencode auth login`)
    // and sessions; state and cache what it keeps between runs.
    writable: [
      '$XDG_CONFIG_HOME/opencode|~/.config/opencode',
      '$XDG_DATA_HOME/opencode|~/.local/share/opencode',
      '$XDG_STATE_HOME/opencode|~/.local/state/opencode',
      '$XDG_CACHE_HOME/opencode|~/.cache/opencode',
      // Its installer's directory (~/.opencode/bin on $PATH), which it also reads as a config
      // directory and writes (.gitignore, package.json) at start. Only if it is there; its bin
      // stays read-only inside, as every $PATH entry in a writable path does.
      '~/.opencode?',
    ],
    // The providers it reads a key from the environment for (models.dev's `env` names).
    keepEnv: [
      'OPENCODE_API_KEY',
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
      'OPENROUTER_API_KEY',
      'GEMINI_API_KEY',
      'GOOGLE_GENERATIVE_AI_API_KEY',
      'GROQ_API_KEY',
      'DEEPSEEK_API_KEY',
      'XAI_API_KEY',
      'MISTRAL_API_KEY',
      'TOGETHER_AI_API_KEY',
      'FIREWORKS_API_KEY',
      'CEREBRAS_API_KEY',
      'ZHIPU_API_KEY',
      'MOONSHOT_API_KEY',
      'GITHUB_TOKEN',
    ],
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

/** Whether a preset path is granted only where it exists (`…?`), rather than made. */
export function onlyIfExists(spec: string): boolean {
  return spec.endsWith('?');
}

/** Expands one `$VAR/rest|~/fallback` path. Pure: the home and environment are given. */
export function expandPresetPath(spec: string, home: string, env: Readonly<Record<string, string | undefined>>): string {
  for (const alt of spec.replace(/\?$/, '').split('|')) {
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
  /** Writable paths granted only where they exist (never made). */
  ifExists: string[];
  /** Set when the copy applies (its variable is not set). */
  copiedFile?: { file: string; dir: string; variable: string };
  keepEnv: string[];
  linuxJail?: { jail: 'bwrap'; why: string };
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
    ifExists: preset.writable.filter(onlyIfExists).map((p) => expandPresetPath(p, home, env)),
    ...(preset.copiedFile && !env[preset.copiedFile.variable]
      ? { copiedFile: { file: expandPresetPath(preset.copiedFile.file, home, env), dir: expandPresetPath(preset.copiedFile.dir, home, env), variable: preset.copiedFile.variable } }
      : {}),
    keepEnv: [...preset.keepEnv],
    ...(preset.linuxJail ? { linuxJail: preset.linuxJail } : {}),
    chosen: explicit !== undefined ? 'explicit' : 'by-command',
  };
}

/**
 * The note confine prints on stderr when it applies a preset: what it may write and keeps after
 * it exits, and which of its keys it keeps (those set). What it writes anywhere else in the home
 * directory fails (read-only or hidden), so nothing is lost silently.
 */
export function presetNote(preset: ResolvedPreset, home: string, env: Readonly<Record<string, string | undefined>> = {}): string {
  const short = (p: string) => (p === home ? '~' : p !== home && isInside(p, home, 'lexical') ? `~/${p.slice(home.length + 1)}` : p);
  const written = preset.writable.filter((p) => !preset.ifExists.includes(p) || exists(p));
  const parts = [`${written.map(short).join(', ')} writable, kept after it exits`];
  const c = preset.copiedFile;
  if (c) parts.push(`${short(c.file)} through a copy in ${short(c.dir)} (${c.variable}), copied back when it exits`);
  if (preset.readable.length) parts.push(`${preset.readable.map(short).join(', ')} readable`);
  const keys = preset.keepEnv.filter((v) => env[v] !== undefined && env[v] !== '');
  if (keys.length) parts.push(`keeps ${keys.join(', ')}`);
  const why = preset.chosen === 'by-command' ? `; --preset none to not` : '';
  return `using the ${preset.name} preset (${parts.join('; ')}${why})`;
}

function exists(p: string): boolean {
  return fs.existsSync(p);
}

/**
 * Makes the preset's writable directories that do not exist yet (mode 0700), so that an agent
 * run for the first time can keep its state: a jail grants only paths that exist. Only paths in
 * the home directory are made, and not those granted only where they exist.
 */
export function ensurePresetDirs(preset: ResolvedPreset, home: string): void {
  for (const p of preset.writable) {
    if (p === home || !isInside(p, home, 'lexical') || preset.ifExists.includes(p)) continue;
    fs.mkdirSync(p, { recursive: true, mode: 0o700 });
  }
}
