// Claude Code, Codex and opencode, the real ones from npm (versions pinned in agents.ts), run
// under `arb confine` as the unprivileged test user whose home holds fake secrets, installed
// each of the ways people install them, with no -r or -w. Each agent talks to a mock of its
// model API (mock-anthropic.ts, mock-openai.ts) started inside the confined command, so it
// shares its network namespace: --no-network leaves only loopback, and nothing leaves the
// machine (the agents' telemetry and update checks are off by their own settings too). The mock
// answers the first turn with one shell tool call and the second with a final message quoting
// the tool's output.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, mustHaveAll, testEnv } from '../helpers/env';
import { RunResult, arbAsUser, asUser } from '../helpers/run';
import { removeUserArea, userDir, userFile } from '../confine/confine-helpers';
import { AGENTS, AgentName, CODEX_CONFIG, Layout, OPENCODE_CONFIG, QUIET_ENV, buildMocks, installAgents, layOut, removeLayouts } from './agents';

const env = testEnv();
const user = env.user;
const home = user?.home ?? '';

let layouts: Layout[] = [];
let mocks = '';
let missing: string | undefined = env.userMissing ?? (user ? undefined : 'no test user');

beforeAll(() => {
  if (missing || !user) return;
  const installed = installAgents();
  if ('missing' in installed) {
    missing = installed.missing;
    return;
  }
  layouts = layOut(installed.prefix, user);
  mocks = buildMocks(user);
  // Prints net=ERRNO for a TCP connection to a public address (0 would mean it got out).
  fs.writeFileSync(
    path.join(mocks, 'net-probe.py'),
    "import socket\ntry:\n    s = socket.socket()\n    s.settimeout(3)\n    r = s.connect_ex(('1.1.1.1', 443))\nexcept OSError as e:\n    r = e.errno\nprint('net=%d' % r)\n",
    { mode: 0o644 },
  );
  // The agents' settings that point them at the mocks (codex, opencode read them from the home).
  fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
  fs.writeFileSync(path.join(home, '.codex', 'config.toml'), CODEX_CONFIG);
  fs.mkdirSync(path.join(home, '.config', 'opencode'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'opencode', 'opencode.json'), OPENCODE_CONFIG);
  for (const d of ['.codex', '.config']) asRootChown(path.join(home, d));
}, 900_000);

afterAll(() => {
  removeUserArea();
  if (user) removeLayouts(user);
});

function asRootChown(p: string): void {
  if (!user) return;
  fs.chownSync(p, user.uid, user.gid);
  if (fs.statSync(p).isDirectory()) for (const e of fs.readdirSync(p)) asRootChown(path.join(p, e));
}

/** Whether the agents are here; in CI (or ARB_REQUIRE_ALL=1) their absence fails the test. */
function ready(): boolean {
  if (!missing) return true;
  if (mustHaveAll()) throw new Error(`the agents suite cannot run: ${missing}`);
  // eslint-disable-next-line no-console
  console.warn(`skipped: ${missing}`);
  return false;
}

const FAKE_KEYS = {
  ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-the-agents-suite-000000',
  OPENAI_API_KEY: 'sk-fake-openai-key-for-the-agents-suite-0000',
};

function layout(name: Layout['name']): Layout {
  const l = layouts.find((x) => x.name === name);
  if (!l) throw new Error(`no layout ${name}`);
  return l;
}

function agentEnv(l: Layout): NodeJS.ProcessEnv {
  return { PATH: `${l.bin}:/usr/local/bin:/usr/bin:/bin`, ...QUIET_ENV, ...FAKE_KEYS };
}

/** A git project of the test user's, with one commit. */
function project(name: string): string {
  const dir = userDir(name);
  userFile(path.join(dir, 'README.md'), '# project\n');
  const git = asUser('sh', ['-c', 'git init -q && git add -A && git commit -qm init'], { cwd: dir });
  if (git.status !== 0) throw new Error(`git init failed: ${git.stderr}`);
  return dir;
}

describe('the agents start under arb confine, installed each usual way, with no -r or -w', () => {
  const cases: [Layout['name'], AgentName][] = [
    ['usr-local', 'claude'],
    ['usr-local', 'codex'],
    ['usr-local', 'opencode'],
    ['npm-global', 'claude'],
    ['npm-global', 'codex'],
    ['npm-global', 'opencode'],
    ['nvm', 'claude'],
    ['nvm', 'codex'],
    ['nvm', 'opencode'],
    ['claude-installer', 'claude'],
    ['opencode-installer', 'opencode'],
    ['tmp-prefix', 'claude'],
    ['tmp-prefix', 'codex'],
    ['tmp-prefix', 'opencode'],
  ];
  it.each(cases)('%s: %s --version', (layoutName, agent) => {
    if (!ready()) return;
    const l = layout(layoutName);
    const dir = project(`version-${layoutName}-${agent}`);
    const r = arbAsUser(['confine', '--rm', '--no-network', AGENTS[agent].bin, '--version'], { cwd: dir, env: agentEnv(l), timeout: 90_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.stringContaining(`using the ${agent} preset`) });
    expect(r.stdout).toContain(AGENTS[agent].version);
  }, 120_000);

  it.each(['claude', 'codex', 'opencode'] as AgentName[])('with Landlock alone (no namespaces): %s --version from ~/.npm-global', (agent) => {
    if (!ready()) return;
    const dir = project(`landlock-${agent}`);
    // Codex's preset picks the bwrap jail; --jail landlock keeps it in Landlock alone here.
    const jail = agent === 'codex' ? ['--jail', 'landlock'] : [];
    const r = arbAsUser(['confine', '--rm', ...jail, AGENTS[agent].bin, '--version'], { cwd: dir, env: { ...agentEnv(layout('npm-global')), ARB_CONFINE_NO_NAMESPACES: '1' }, timeout: 90_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.stringContaining('Landlock alone: turned off by ARB_CONFINE_NO_NAMESPACES=1') });
    expect(r.stdout).toContain(AGENTS[agent].version);
    if (agent === 'codex') {
      // Said once: its own sandbox cannot start there, and how to run.
      expect(r.stderr).toContain("Codex's own sandbox (bubblewrap) cannot run inside Landlock, which forbids mounting to every process it confines: in the landlock jail its commands will fail (use --jail bwrap, or run codex with --sandbox danger-full-access to leave only confine's jail)");
    }
  }, 120_000);

  it('a program in the home that is not on PATH: 126, and the -r hint names its package', () => {
    if (!ready()) return;
    const dir = project('hint');
    const codex = path.join(home, '.npm-global', 'lib', 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
    const r = arbAsUser(['confine', '--rm', '--no-network', codex, '--version'], { cwd: dir, env: { PATH: '/usr/bin:/bin' } });
    expect(r.status).toBe(126);
    expect(r.stderr).toContain(`give the folder it belongs to with -r ${home}/.npm-global/lib/node_modules/@openai/codex`);
    const given = arbAsUser(['confine', '--rm', '--no-network', '-r', '~/.npm-global/lib/node_modules/@openai/codex', codex, '--version'], { cwd: dir, env: { PATH: '/usr/bin:/bin' } });
    expect({ status: given.status, stdout: given.stdout }).toEqual({ status: 0, stdout: expect.stringContaining(AGENTS.codex.version) });
  }, 120_000);
});

/** One turn of the agent against the mock, in a fork named `agent`; returns the run and paths. */
function runAgent(agent: AgentName, l: Layout, extraCommand = ''): { r: RunResult; dir: string; fork: string; outside: string } {
  const dir = project(`flow-${agent}`);
  const outside = path.join(path.dirname(dir), `leaked-by-${agent}-${process.pid}.txt`);
  const command = [
    'echo made-by-agent > agent.txt',
    'echo "cwd=$(pwd)"',
    'cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.claude.json 2>&1 | head -5',
    `echo leak > '${outside}' 2>/dev/null; echo "outside=$?"`,
    `python3 ${mocks}/net-probe.py`,
    ...(extraCommand ? [extraCommand] : []),
  ].join('; ');
  const mock = agent === 'codex' ? `${mocks}/mock-openai.js 8788` : `${mocks}/mock-anthropic.js 8787`;
  const run =
    agent === 'claude'
      ? 'claude -p --dangerously-skip-permissions "make the file"'
      : agent === 'codex'
        ? 'codex exec --skip-git-repo-check --sandbox workspace-write "make the file" </dev/null'
        : 'opencode run "make the file" </dev/null';
  const script = `node ${mock} /tmp/mock.ready & i=0; while [ ! -e /tmp/mock.ready ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; exec ${run}`;
  const r = arbAsUser(['confine', '--no-network', '-n', 'agent', '--preset', agent, '--', 'sh', '-c', script], {
    cwd: dir,
    env: { ...agentEnv(l), MOCK_COMMAND: command },
    timeout: 150_000,
  });
  return { r, dir, fork: `${dir}.agent`, outside };
}

/** What every agent's turn must show: it ran in the fork, saw no secret, wrote nothing outside. */
function expectConfinedTurn(t: ReturnType<typeof runAgent>): void {
  const all = t.r.stdout + t.r.stderr;
  if (t.r.status !== 0) throw new Error(`the agent failed (${t.r.status}):\n${all}`);
  // The agent called the mock twice: the turn with the tool call, and the one with its output.
  expect(all.match(/^mock: POST /gm)?.length ?? 0).toBeGreaterThanOrEqual(2);
  expect(all).toContain('MOCK-DONE:');
  expect(all).toContain(`cwd=${t.fork}`);
  for (const secret of ['FAKE-SSH-PRIVATE-KEY', 'FAKE-AWS-SECRET', '"fake": true']) expect(all).not.toContain(secret);
  expect(all).not.toContain(FAKE_KEYS.ANTHROPIC_API_KEY);
  expect(all).toMatch(/outside=[1-9]/);
  expect(fs.existsSync(t.outside)).toBe(false);
  // --no-network: only loopback (ENETUNREACH, 101; Codex's own sandbox denies the socket, EPERM).
  expect(all).toMatch(/net=(?!0\b)\d+/);
  expect(fs.readFileSync(path.join(t.fork, 'agent.txt'), 'utf8')).toBe('made-by-agent\n');
  expect(fs.existsSync(path.join(t.dir, 'agent.txt'))).toBe(false);
  // Its patch applies in the original.
  const applied = asUser('sh', ['-c', `node '${CLI}' diff '${t.fork}' > ../agent-${process.pid}.patch; git apply ../agent-${process.pid}.patch && cat agent.txt`], { cwd: t.dir });
  expect({ status: applied.status, stdout: applied.stdout, stderr: applied.stderr }).toEqual({ status: 0, stdout: 'made-by-agent\n', stderr: '' });
}

describe('each agent works in a fork: one shell tool call, confined, its patch applies', () => {
  it("Claude Code (its installer's layout): the Bash tool runs in the fork; ~/.claude.json is kept", () => {
    if (!ready()) return;
    const t = runAgent('claude', layout('claude-installer'));
    expectConfinedTurn(t);
    expect(t.r.stderr).toContain('~/.claude.json through a copy in ~/.claude (CLAUDE_CONFIG_DIR), copied back when it exits');
    // What Claude Code saved in its copy came back to ~/.claude.json.
    const saved = JSON.parse(fs.readFileSync(path.join(home, '.claude.json'), 'utf8')) as Record<string, unknown>;
    expect(saved).toHaveProperty('firstStartTime');
  }, 180_000);

  it('claude mcp add, confined, is kept in ~/.claude.json', () => {
    if (!ready()) return;
    const dir = project('mcp');
    const r = arbAsUser(['confine', '--rm', '--no-network', 'claude', 'mcp', 'add', '-s', 'user', 'arb-e2e', '--', '/bin/true'], { cwd: dir, env: agentEnv(layout('npm-global')), timeout: 90_000 });
    expect(r.status).toBe(0);
    const saved = JSON.parse(fs.readFileSync(path.join(home, '.claude.json'), 'utf8')) as { mcpServers?: Record<string, unknown> };
    expect(saved.mcpServers).toHaveProperty('arb-e2e');
  }, 120_000);

  it("Codex (npm prefix in the home): its own sandbox (bubblewrap) nests in confine's bwrap jail and runs the command", () => {
    if (!ready()) return;
    const t = runAgent('codex', layout('npm-global'), 'echo x > ~/.codex/inner-probe 2>/dev/null; echo "codex-home=$?"');
    expect(t.r.stderr).toContain("using the bwrap jail for codex, without Landlock inside: Codex's own sandbox (bubblewrap) cannot run inside Landlock");
    expectConfinedTurn(t);
    const all = t.r.stdout + t.r.stderr;
    expect(all).not.toContain('setting up uid map');
    // confine lets Codex write ~/.codex (its preset); Codex's own sandbox (workspace-write) does
    // not let the command it runs: both sandboxes held.
    expect(all).toMatch(/codex-home=[1-9]/);
    expect(fs.existsSync(path.join(home, '.codex', 'inner-probe'))).toBe(false);
    // Codex kept its session in ~/.codex.
    expect(fs.readdirSync(path.join(home, '.codex'))).toEqual(expect.arrayContaining(['sessions']));
  }, 180_000);

  it("opencode (its installer's layout): its bash tool runs in the fork; its data is kept", () => {
    if (!ready()) return;
    const t = runAgent('opencode', layout('opencode-installer'));
    expectConfinedTurn(t);
    expect(fs.readdirSync(path.join(home, '.local', 'share', 'opencode')).length).toBeGreaterThan(0);
  }, 180_000);
});
