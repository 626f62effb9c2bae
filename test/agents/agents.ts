// The real agents, for the end-to-end suite: installed once from the npm registry (exact
// versions) into a cache directory reused between runs, then laid out for the unprivileged test
// user the ways people install them. The agents' packages carry their native binaries (platform
// packages in optionalDependencies); nothing is fetched outside the registry. Files are hard
// links into the cache (one file system), so the six layouts cost no copy.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT } from '../helpers/env';

/** The versions the suite runs, pinned; bump them together with what the mocks answer. */
export const AGENTS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
  opencode: { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
} as const;
export type AgentName = keyof typeof AGENTS;
export const AGENT_NAMES = Object.keys(AGENTS) as AgentName[];

/** Where the npm prefix with the three agents is cached ($ARB_AGENTS_CACHE, CI caches it). */
export function agentsCache(): string {
  return process.env.ARB_AGENTS_CACHE || '/var/cache/arb-agents';
}

function key(): string {
  return AGENT_NAMES.map((n) => `${n}-${AGENTS[n].version}`).join('+');
}

/**
 * The npm prefix holding the three agents (bin/claude, bin/codex, bin/opencode), installed from
 * the registry into the cache if it is not there yet. Returns it, or why it cannot be had.
 */
export function installAgents(): { prefix: string } | { missing: string } {
  const cache = agentsCache();
  const prefix = path.join(cache, key());
  const complete = () => AGENT_NAMES.every((n) => fs.existsSync(path.join(prefix, 'bin', AGENTS[n].bin)));
  if (complete()) return { prefix };
  if (process.getuid?.() !== 0) return { missing: 'installing the agents for the test user needs root' };
  fs.mkdirSync(cache, { recursive: true, mode: 0o755 });
  const tmp = fs.mkdtempSync(path.join(cache, 'installing-'));
  const r = spawnSync(
    'npm',
    ['install', '--global', '--prefix', tmp, '--cache', path.join(cache, 'npm-cache'), '--no-audit', '--no-fund', '--loglevel=error', ...AGENT_NAMES.map((n) => `${AGENTS[n].pkg}@${AGENTS[n].version}`)],
    { encoding: 'utf8', timeout: 900_000, env: { ...process.env, npm_config_update_notifier: 'false' } },
  );
  if (r.status !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    return { missing: `npm install of the agents failed (${r.status ?? r.signal}): ${(r.stderr || r.error?.message || '').trim().slice(-2000)}` };
  }
  fs.rmSync(prefix, { recursive: true, force: true });
  fs.renameSync(tmp, prefix);
  fs.chmodSync(prefix, 0o755);
  return complete() ? { prefix } : { missing: `the agents' programs are missing from ${prefix}/bin after npm install` };
}

/** How people install the agents, each a PATH entry to put first. */
export type LayoutName = 'usr-local' | 'npm-global' | 'nvm' | 'claude-installer' | 'opencode-installer' | 'tmp-prefix';
export interface Layout {
  name: LayoutName;
  /** The directory to put first on PATH. */
  bin: string;
  agents: AgentName[];
  describe: string;
}

function sh(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** mkdir -p, each directory made owned by the user (those already there are left alone). */
function userMkdir(dir: string, uid: number, gid: number): void {
  if (fs.existsSync(dir)) return;
  userMkdir(path.dirname(dir), uid, gid);
  fs.mkdirSync(dir, { mode: 0o755 });
  fs.chownSync(dir, uid, gid);
}

/** Hard links of a tree (cp -al), or a copy where links cannot be made (another file system). */
function linkTree(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  if (spawnSync('cp', ['-al', from, to]).status !== 0) sh('cp', ['-a', from, to]);
}

function linkFile(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
    fs.chmodSync(to, 0o755);
  }
}

/**
 * Lays the agents out for the user: an npm global prefix standing for /usr/local (outside the
 * home, not /usr/local itself on a shared machine), an npm prefix in the home (~/.npm-global),
 * nvm's layout (~/.nvm/versions/node/vX, with its node), Claude Code's installer
 * (~/.local/bin/claude -> ~/.local/share/claude/versions/X), opencode's (~/.opencode/bin), and a
 * prefix under /tmp. Files stay owned by root (hard links into the cache); the directories in
 * the home are the user's.
 */
export function layOut(prefix: string, user: { name: string; uid: number; gid: number; home: string }): Layout[] {
  const { uid, gid, home } = user;
  const out: Layout[] = [];
  const usrLocal = `/var/lib/${user.name}-agents/usr-local`;
  fs.rmSync(usrLocal, { recursive: true, force: true });
  fs.mkdirSync(usrLocal, { recursive: true, mode: 0o755 });
  for (const d of ['bin', 'lib']) linkTree(path.join(prefix, d), path.join(usrLocal, d));
  out.push({ name: 'usr-local', bin: path.join(usrLocal, 'bin'), agents: AGENT_NAMES, describe: 'npm install -g, prefix /usr/local' });

  const npmGlobal = path.join(home, '.npm-global');
  userMkdir(npmGlobal, uid, gid);
  for (const d of ['bin', 'lib']) linkTree(path.join(prefix, d), path.join(npmGlobal, d));
  out.push({ name: 'npm-global', bin: path.join(npmGlobal, 'bin'), agents: AGENT_NAMES, describe: 'npm install -g, prefix ~/.npm-global' });

  const nvm = path.join(home, '.nvm', 'versions', 'node', process.version);
  userMkdir(path.join(nvm, 'bin'), uid, gid);
  linkTree(path.join(prefix, 'lib'), path.join(nvm, 'lib'));
  linkFile(fs.realpathSync(process.execPath), path.join(nvm, 'bin', 'node'));
  for (const name of fs.readdirSync(path.join(prefix, 'bin'))) {
    fs.symlinkSync(fs.readlinkSync(path.join(prefix, 'bin', name)), path.join(nvm, 'bin', name));
  }
  out.push({ name: 'nvm', bin: path.join(nvm, 'bin'), agents: AGENT_NAMES, describe: 'nvm (~/.nvm/versions/node/vX, its own node)' });

  const claudeExe = fs.realpathSync(path.join(prefix, 'bin', 'claude'));
  const versions = path.join(home, '.local', 'share', 'claude', 'versions');
  userMkdir(versions, uid, gid);
  const version = path.join(versions, AGENTS.claude.version);
  linkFile(claudeExe, version);
  userMkdir(path.join(home, '.local', 'bin'), uid, gid);
  const link = path.join(home, '.local', 'bin', 'claude');
  fs.rmSync(link, { force: true });
  fs.symlinkSync(version, link);
  fs.lchownSync(link, uid, gid);
  out.push({ name: 'claude-installer', bin: path.join(home, '.local', 'bin'), agents: ['claude'], describe: "Claude Code's installer (~/.local/bin/claude -> ~/.local/share/claude/versions/X)" });

  const opencodeBin = path.join(home, '.opencode', 'bin');
  userMkdir(opencodeBin, uid, gid);
  linkFile(fs.realpathSync(path.join(prefix, 'bin', 'opencode')), path.join(opencodeBin, 'opencode'));
  out.push({ name: 'opencode-installer', bin: opencodeBin, agents: ['opencode'], describe: "opencode's installer (~/.opencode/bin)" });

  const tmpPrefix = `/tmp/${user.name}-agents-prefix`;
  fs.rmSync(tmpPrefix, { recursive: true, force: true });
  fs.mkdirSync(tmpPrefix, { mode: 0o755 });
  for (const d of ['bin', 'lib']) linkTree(path.join(prefix, d), path.join(tmpPrefix, d));
  out.push({ name: 'tmp-prefix', bin: path.join(tmpPrefix, 'bin'), agents: AGENT_NAMES, describe: 'npm install -g, prefix under /tmp' });
  return out;
}

/** Removes what layOut made outside the home (the home is made afresh by the global setup). */
export function removeLayouts(user: { name: string }): void {
  fs.rmSync(`/var/lib/${user.name}-agents`, { recursive: true, force: true });
  fs.rmSync(`/tmp/${user.name}-agents-prefix`, { recursive: true, force: true });
}

/**
 * The mocks of the model APIs (test/agents/mock-*.ts), compiled to plain JavaScript where a
 * confined command can run them (outside the home and /tmp). Returns their directory.
 */
export function buildMocks(user: { name: string }): string {
  const dir = `/var/lib/${user.name}-agents/mock`;
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const esbuild = require('esbuild') as typeof import('esbuild');
  for (const name of ['mock-anthropic', 'mock-openai']) {
    esbuild.buildSync({ entryPoints: [path.join(REPO_ROOT, 'test', 'agents', `${name}.ts`)], outfile: path.join(dir, `${name}.js`), platform: 'node', format: 'cjs', logLevel: 'error' });
  }
  fs.chmodSync(dir, 0o755);
  return dir;
}

/**
 * The agents' own settings that keep everything on the machine: no telemetry, no update check,
 * no model list fetched. Mock ports: Anthropic's on 8787, OpenAI's on 8788 (inside the confined
 * command's own network namespace).
 */
export const QUIET_ENV: Readonly<Record<string, string>> = {
  // Claude Code: no telemetry, error reports or update checks; the mock as its API.
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787',
  // opencode: no update, models.dev fetch, LSP downloads or default plugins.
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_SHARE: '1',
};

/** Codex's config: the mock as a Responses API provider; no update check, no analytics. */
export const CODEX_CONFIG = `model = "mock-model"
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:8788/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
`;

/** opencode's config: a provider of its own on the bundled Anthropic SDK, aimed at the mock. */
export const OPENCODE_CONFIG = JSON.stringify(
  {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: 'mock/mock-model',
    small_model: 'mock/mock-model',
    permission: { bash: 'allow', edit: 'allow', external_directory: 'allow' },
    provider: {
      mock: {
        npm: '@ai-sdk/anthropic',
        name: 'Mock',
        options: { baseURL: 'http://127.0.0.1:8787/v1', apiKey: '{env:ANTHROPIC_API_KEY}' },
        models: { 'mock-model': { name: 'Mock model', tool_call: true } },
      },
    },
  },
  null,
  2,
);
