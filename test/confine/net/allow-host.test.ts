// --allow-host end to end, as a user meets it: arb confine run by the unprivileged test user,
// real clients (curl, Python's urllib, git, npm) inside, and servers on this machine's loopback
// standing in for real hosts. The proxy resolves names with the system's resolver, as in
// production; the test gives the stand-ins names in /etc/hosts (lines it adds and removes),
// which a confined command cannot change and which is what every program on the machine reads.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { itIf, testEnv } from '../../helpers/env';
import { RunResult, arbAsUser } from '../../helpers/run';
import { removeUserArea, userDir, userFile } from '../confine-helpers';

const env = testEnv();
const user = env.user;
const ready = Boolean(user && env.userWork);
const test = itIf(ready, env.userMissing ?? 'no test user');

const tag = (user?.name ?? 'arb').replace(/[^a-z0-9-]/g, '');
const PKG = `pkg.${tag}.arb-test`;
const OTHER = `other.${tag}.arb-test`;
const WILD = `wild.sub.${tag}.arb-test`;
const MARK = `# arb-test allow-host ${tag} ${process.pid}`;

let area: string;
let project: string;
let cert: string;
let probe: string;
let udpLog: string;
let servers: ChildProcess;
let ports: { https: number; http: number; udp: number };

function hostsWithout(text: string): string {
  return text
    .split('\n')
    .filter((l) => !l.endsWith(MARK))
    .join('\n');
}

beforeAll(async () => {
  if (!ready) return;
  area = userDir('allow-host');
  project = userDir('project', area);
  const files = userDir('files', area);
  cert = path.join(area, 'cert.pem');
  const key = path.join(area, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${PKG}`, '-addext', `subjectAltName=DNS:${PKG},DNS:${WILD}`, '-keyout', key, '-out', cert], { stdio: 'ignore' });
  fs.chmodSync(cert, 0o644);
  // A bare repository served as plain files: git clones it over HTTPS the "dumb" way.
  const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  const work = path.join(area, 'work');
  execFileSync('git', ['init', '-q', '-b', 'main', work], { env: gitEnv });
  fs.writeFileSync(path.join(work, 'README'), 'cloned through the proxy\n');
  execFileSync('git', ['-C', work, 'add', 'README'], { env: gitEnv });
  execFileSync('git', ['-C', work, 'commit', '-q', '-m', 'first'], { env: gitEnv });
  execFileSync('git', ['clone', '-q', '--bare', work, path.join(files, 'repo.git')], { env: gitEnv });
  execFileSync('git', ['-C', path.join(files, 'repo.git'), 'update-server-info'], { env: gitEnv });
  execFileSync('chmod', ['-R', 'a+rX', area]);
  probe = userFile(path.join(area, 'net-probe.py'), fs.readFileSync(path.join(__dirname, 'net-probe.py'), 'utf8'));
  udpLog = path.join(area, 'udp.log');
  fs.writeFileSync(udpLog, '');

  servers = spawn(process.execPath, [path.join(__dirname, 'servers.js'), files, key, cert, udpLog], { stdio: ['ignore', 'pipe', 'inherit'] });
  ports = await new Promise((resolve, reject) => {
    let out = '';
    servers.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out));
    });
    servers.on('exit', (code) => reject(new Error(`the test servers exited (${code})`)));
  });

  const hosts = hostsWithout(fs.readFileSync('/etc/hosts', 'utf8')).replace(/\n*$/, '\n');
  fs.writeFileSync('/etc/hosts', `${hosts}127.0.0.1 ${PKG} ${MARK}\n127.0.0.1 ${WILD} ${MARK}\n`);
}, 60_000);

afterAll(() => {
  if (!ready) return;
  servers?.kill();
  fs.writeFileSync('/etc/hosts', hostsWithout(fs.readFileSync('/etc/hosts', 'utf8')));
  removeUserArea();
});

const hostsFile = () => path.join(user!.home, '.config', 'confine', 'hosts');

/** `arb confine -d PROJECT [args] -- sh -c SCRIPT` as the test user. */
function confined(args: string[], script: string, extraEnv: NodeJS.ProcessEnv = {}): RunResult {
  return arbAsUser(['confine', '-d', project, ...args, '--', 'sh', '-c', script], { cwd: project, env: extraEnv, timeout: 120_000 });
}

function probeLines(r: RunResult): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of r.stdout.split('\n')) {
    const m = /^(.*?) -> (.*)$/.exec(line);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

describe('arb confine --allow-host (network namespace)', () => {
  test('curl reaches an allowed host over HTTPS and plain HTTP, and gets a 403 naming the option elsewhere', () => {
    const r = confined(
      ['--headless', '--allow-host', `${PKG}:${ports.https}`, '--allow-host', `${PKG}:${ports.http}`],
      [
        `curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello`,
        `curl -sS http://${PKG}:${ports.http}/hello`,
        `curl -sS http://${OTHER}/page; echo`,
        `curl -sS --cacert ${cert} https://${OTHER}/ 2>&1; echo "https-refused=$?"`,
      ].join('; '),
    );
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.stdout).toContain(`hello from ${PKG}:${ports.https}`);
    expect(r.stdout).toContain(`hello from ${PKG}:${ports.http}`);
    expect(r.stdout).toContain(`may not reach ${OTHER}:80`);
    expect(r.stdout).toContain(`--allow-host ${OTHER}\n`);
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403[\s\S]*https-refused=56/);
    expect(r.status).toBe(0);
  });

  test("Python's urllib, git over HTTPS and npm reach an allowed host; urllib is refused elsewhere", () => {
    const r = confined(
      ['--headless', '--allow-host', `${PKG}:${ports.https}`, '--allow-host', `${PKG}:${ports.http}`],
      [
        `python3 ${probe} ${q(`urllib https://${PKG}:${ports.https}/hello ${cert}`)} ${q(`urllib https://${OTHER}/x ${cert}`)}`,
        `git -c http.sslCAInfo=${cert} clone -q https://${PKG}:${ports.https}/repo.git clone && cat clone/README`,
        `npm view arbpkg version --registry http://${PKG}:${ports.http}/ --cache ${project}/npm-cache`,
      ].join('; '),
    );
    const p = probeLines(r);
    expect(p[`urllib https://${PKG}:${ports.https}/hello ${cert}`]).toBe(`OK hello from ${PKG}:${ports.https}`);
    expect(p[`urllib https://${OTHER}/x ${cert}`]).toMatch(/^URLError Tunnel connection failed: 403/);
    expect(r.stdout).toContain('cloned through the proxy');
    expect(r.stdout).toMatch(/^1\.2\.3$/m);
  });

  test('a redirect to a host not on the list is judged anew, and refused', () => {
    const to = `https://${OTHER}/secret`;
    const r = confined(['--headless', '--allow-host', `${PKG}:${ports.https}`], `curl -sS -L --cacert ${cert} ${q(`https://${PKG}:${ports.https}/redirect?to=${to}`)} 2>&1`);
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403/);
  });

  test("Node's fetch with a proxy agent (undici's ProxyAgent on HTTPS_PROXY) reaches an allowed host, and gets the 403 elsewhere", () => {
    // undici, copied where the confined user can read it (a checkout under /tmp is hidden inside).
    const undici = path.join(area, 'node_modules', 'undici');
    if (!fs.existsSync(undici)) {
      fs.cpSync(path.dirname(require.resolve('undici/package.json')), undici, { recursive: true });
      execFileSync('chmod', ['-R', 'a+rX', path.join(area, 'node_modules')]);
    }
    const script = [
      `const { ProxyAgent, fetch } = require(${JSON.stringify(undici)});`,
      `const ca = require('fs').readFileSync(${JSON.stringify(cert)});`,
      `const dispatcher = new ProxyAgent({ uri: process.env.HTTPS_PROXY, requestTls: { ca } });`,
      `const get = (u) => fetch(u, { dispatcher }).then((r) => r.text().then((t) => console.log(u, r.status, t.trim())), (e) => console.log(u, 'failed', String(e.cause && e.cause.message)));`,
      `get('https://${PKG}:${ports.https}/hello').then(() => get('https://${OTHER}/x'));`,
    ].join(' ');
    const r = confined(['--headless', '--allow-host', `${PKG}:${ports.https}`], `node -e ${q(script)}`);
    expect(r.stdout).toContain(`https://${PKG}:${ports.https}/hello 200 hello from ${PKG}:${ports.https}\n`);
    // undici turns the proxy's 403 to CONNECT into "Request was cancelled": the host is not reached.
    expect(r.stdout).toContain(`https://${OTHER}/x failed`);
    expect(r.stdout).not.toContain(`hello from ${OTHER}`);
  });

  test("Node 20's fetch ignores HTTPS_PROXY, so it reaches nothing (documented: use a proxy agent)", () => {
    const r = confined(['--headless', '--allow-host', `${PKG}:${ports.https}`], `node -e ${q(`fetch('https://${PKG}:${ports.https}/hello').then((r) => console.log('status', r.status), (e) => console.log('failed', e.cause && e.cause.code))`)}`);
    expect(r.stdout.trim()).toBe('failed ECONNREFUSED');
  });

  test('raw TCP, UDP and DNS do not get out: each fails with a clear errno', () => {
    fs.writeFileSync(udpLog, '');
    const r = confined(['--headless', '--allow-host', `${PKG}:${ports.https}`], `python3 ${probe} ${['tcp 127.0.0.1 ' + ports.https, 'tcp 192.0.2.1 443', 'tcp6 ::1 ' + ports.https, 'udp 127.0.0.1 ' + ports.udp, 'udp 192.0.2.1 53', 'dns example.com'].map(q).join(' ')}`);
    const p = probeLines(r);
    // Loopback inside is the namespace's own: nothing listens there but the proxy.
    expect(p[`tcp 127.0.0.1 ${ports.https}`]).toBe('ECONNREFUSED');
    expect(p[`tcp6 ::1 ${ports.https}`]).toBe('ECONNREFUSED');
    expect(p['tcp 192.0.2.1 443']).toBe('ENETUNREACH');
    expect(p['udp 192.0.2.1 53']).toBe('ENETUNREACH');
    expect(p['dns example.com']).toMatch(/^EAI_/);
    // The datagram to loopback stayed in the namespace: the listener outside got nothing.
    expect(p[`udp 127.0.0.1 ${ports.udp}`]).toBe('OK');
    expect(fs.readFileSync(udpLog, 'utf8')).toBe('');
  });

  test('a *.domain name that resolves to this machine is refused; the same name given itself is not', () => {
    const wild = confined(['--headless', '--allow-host', `*.${tag}.arb-test:${ports.https}`], `curl -sS --cacert ${cert} https://${WILD}:${ports.https}/hello 2>&1; echo; curl -sS -x "" --cacert ${cert} https://${WILD}:${ports.https}/hello 2>&1`);
    expect(wild.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    const exact = confined(['--headless', '--allow-host', `${WILD}:${ports.https}`], `curl -sS --cacert ${cert} https://${WILD}:${ports.https}/hello`);
    expect(exact.stdout).toContain(`hello from ${WILD}:${ports.https}`);
  });

  test('-v prints every host reached or refused with counts and bytes; --net-log writes them as JSON lines', () => {
    const log = path.join(area, 'net.jsonl');
    const r = confined(['-v', '--headless', '--allow-host', `${PKG}:${ports.http}`, '--net-log', log], `curl -sS http://${PKG}:${ports.http}/big/100000 -o /dev/null; curl -sS http://${PKG}:${ports.http}/hello -o /dev/null; curl -sS http://${OTHER}/ -o /dev/null`);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`reached ${PKG.replace(/\./g, '\\.')}:${ports.http}\\s+2 connections, [0-9.]+ \\w+ sent, 9[0-9.]+ KiB received`));
    expect(r.stderr).toMatch(new RegExp(`refused ${OTHER.replace(/\./g, '\\.')}:80\\s+1 connection`));
    const lines = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const conns = lines.filter((l) => l.type === 'connection');
    expect(conns).toHaveLength(3);
    expect(conns[0]).toMatchObject({ host: PKG, port: ports.http, method: 'GET', allowed: true, address: '127.0.0.1' });
    expect(conns[0].bytesIn).toBeGreaterThan(100000);
    expect(conns[2]).toMatchObject({ host: OTHER, port: 80, allowed: false, status: 403 });
    const hosts = lines.filter((l) => l.type === 'host');
    expect(hosts).toEqual([
      expect.objectContaining({ host: PKG, allowed: true, connections: 2 }),
      expect.objectContaining({ host: OTHER, allowed: false, connections: 1 }),
    ]);
  });
});

describe('asking about a host not on the list', () => {
  let tools: string;
  beforeAll(() => {
    if (!ready) return;
    tools = userDir('ask', area);
    userFile(path.join(tools, 'ask'), `#!/bin/sh\necho "$CONFINE_ASK_KIND $*" >> ${tools}/asked\ncat ${tools}/answer\n`, 0o755);
  });
  beforeEach(() => {
    if (!ready) return;
    fs.rmSync(path.dirname(hostsFile()), { recursive: true, force: true });
    fs.rmSync(path.join(tools, 'asked'), { force: true });
  });
  const run = (answer: string, script: string) => {
    fs.writeFileSync(path.join(tools, 'answer'), `${answer}\n`);
    return confined(['--allow-host', 'example.invalid'], script, { CONFINE_ASK: path.join(tools, 'ask') });
  };
  const asked = () => (fs.existsSync(path.join(tools, 'asked')) ? fs.readFileSync(path.join(tools, 'asked'), 'utf8') : '');

  test('once: allowed for this run, asked one time, nothing kept', () => {
    const r = run('once', `curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello; curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello`);
    expect(r.stdout.match(/hello from/g)).toHaveLength(2);
    expect(asked()).toBe(`host connect ${PKG}:${ports.https}\n`);
    expect(fs.existsSync(hostsFile())).toBe(false);
  });

  test('no: refused with the 403, and not asked again in the run', () => {
    const r = run('no', `curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello 2>&1; curl -sS http://${PKG}:${ports.https}/x`);
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    expect(r.stdout).toContain(`--allow-host ${PKG}:${ports.https}`);
    expect(asked().split('\n').filter(Boolean)).toHaveLength(1);
  });

  test('always: kept in ~/.config/confine/hosts, which the command can neither read nor write, and not asked again', () => {
    const r = run('always', `curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello; cat ~/.config/confine/hosts; echo "read=$?"; echo x >> ~/.config/confine/hosts; echo "write=$?"`);
    expect(r.stdout).toContain('hello from');
    expect(r.stdout).toContain('read=1');
    expect(r.stdout).toMatch(/write=[12]/);
    expect(fs.readFileSync(hostsFile(), 'utf8')).toMatch(new RegExp(`\\n${PKG.replace(/\./g, '\\.')}:${ports.https}\\n$`));
    const again = run('no', `curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello`);
    expect(again.stdout).toContain('hello from');
    expect(asked().split('\n').filter(Boolean)).toHaveLength(1);
  });

  test('--headless asks nobody: refused', () => {
    fs.writeFileSync(path.join(tools, 'answer'), 'always\n');
    const r = confined(['--headless', '--allow-host', 'example.invalid'], `curl -sS http://${PKG}:${ports.http}/hello`, { CONFINE_ASK: path.join(tools, 'ask') });
    expect(r.stdout).toContain('not asked: --headless');
    expect(asked()).toBe('');
  });
});

describe('Landlock alone (no network namespace)', () => {
  test('curl reaches the allowed host through the proxy; raw TCP and UDP sockets are refused with EACCES', () => {
    const r = confined(
      ['--headless', '--allow-host', `${PKG}:${ports.https}`],
      `curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello; curl -sS --cacert ${cert} https://${OTHER}/ 2>&1; python3 ${probe} ${q(`tcp 127.0.0.1 ${ports.https}`)} ${q(`udp 127.0.0.1 ${ports.udp}`)} mptcp`,
      { ARB_CONFINE_NO_NAMESPACES: '1' },
    );
    expect(r.stdout).toContain(`hello from ${PKG}:${ports.https}`);
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    const p = probeLines(r);
    expect(p[`tcp 127.0.0.1 ${ports.https}`]).toBe('EACCES');
    expect(p[`udp 127.0.0.1 ${ports.udp}`]).toBe('EACCES');
    // A stream socket Landlock's TCP rules might not cover (MPTCP) is refused by seccomp.
    expect(p.mptcp).toBe('EACCES');
    expect(r.stderr).toMatch(/Landlock lets the command connect by TCP only to port \d+, the proxy's, but on any address/);
  });
});

describe('the bwrap jail', () => {
  test('curl reaches the allowed host through the proxy in bwrap\'s network namespace; raw TCP, UDP and DNS do not get out', () => {
    fs.writeFileSync(udpLog, '');
    const r = confined(
      ['--jail', 'bwrap', '--headless', '--allow-host', `${PKG}:${ports.https}`],
      `curl -sS --cacert ${cert} https://${PKG}:${ports.https}/hello; curl -sS --cacert ${cert} https://${OTHER}/ 2>&1; python3 ${probe} ${['tcp 127.0.0.1 ' + ports.https, 'tcp 192.0.2.1 443', 'udp 127.0.0.1 ' + ports.udp, 'udp 192.0.2.1 53', 'dns example.com'].map(q).join(' ')}`,
    );
    expect(r.stdout).toContain(`hello from ${PKG}:${ports.https}`);
    expect(r.stdout).toMatch(/CONNECT tunnel failed, response 403/);
    const p = probeLines(r);
    expect(p[`tcp 127.0.0.1 ${ports.https}`]).toBe('ECONNREFUSED');
    expect(p['tcp 192.0.2.1 443']).toBe('ENETUNREACH');
    expect(p['udp 192.0.2.1 53']).toBe('ENETUNREACH');
    expect(p['dns example.com']).toMatch(/^EAI_/);
    expect(p[`udp 127.0.0.1 ${ports.udp}`]).toBe('OK');
    expect(fs.readFileSync(udpLog, 'utf8')).toBe('');
  });
});

describe('options', () => {
  test.each([
    [['--allow-host', 'https://example.com/'], /--allow-host 'https:\/\/example.com\/': give a host, not a URL/],
    [['--allow-host', '@nope'], /no such set; the sets are @registries/],
    [['--allow-host', '*'], /would allow every host/],
    [['--allow-host', 'example.com', '--jail', 'none'], /--allow-host needs a jail/],
    [['--allow-host', 'example.com', '--no-network'], /--allow-host and --no-network/],
    [['--net-log', '/tmp/x.jsonl'], /--net-log records what passes through the proxy/],
    [['--allow-host', 'example.com', '--net-log', '/nonexistent/dir/x'], /the directory \/nonexistent\/dir does not exist/],
  ])('%j is a usage error (exit 2) before anything is forked', (args, message) => {
    const before = fs.readdirSync(area).sort();
    const r = arbAsUser(['confine', ...args, '--', 'true'], { cwd: project });
    expect(r.stderr).toMatch(message);
    expect(r.status).toBe(2);
    expect(fs.readdirSync(area).sort()).toEqual(before);
  });

  test('--explain lists the hosts, with the preset API hosts and @registries expanded', () => {
    const r = arbAsUser(['confine', '--explain', '--preset', 'claude', '--allow-host', '@registries', '--allow-host', 'example.com:8443', '--', 'true'], { cwd: project });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/network: only through confine's proxy \(a network namespace with only loopback/);
    expect(r.stdout).toMatch(/registry\.npmjs\.org\s+ports 443, 80 \(@registries\)/);
    expect(r.stdout).toMatch(/example\.com:8443\s+port 8443 \(--allow-host\)/);
    expect(r.stdout).toMatch(/api\.anthropic\.com\s+ports 443, 80 \(the claude preset\)/);
  });
});
