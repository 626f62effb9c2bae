import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { canonicalTarget } from '../../../src/confine/net/hosts';
import { HostAnswer, HostPolicy, addHost, hostsFilePath, parseHostsFile } from '../../../src/confine/net/policy';
import { parseAllowHosts } from '../../../src/confine/net/sets';

const t = (host: string, port = 443) => canonicalTarget(host, port)!;
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-hosts-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function asker(answers: HostAnswer[]) {
  const asked: string[] = [];
  const ask = async (target: { host: string; port: number }) => {
    asked.push(`${target.host}:${target.port}`);
    await new Promise((r) => setTimeout(r, 10));
    return { answer: answers.shift() ?? ('no' as HostAnswer), by: 'CONFINE_ASK' };
  };
  return { ask, asked };
}

describe('HostPolicy', () => {
  it('allows the list without asking, saying which rule', async () => {
    const { ask, asked } = asker([]);
    const p = new HostPolicy({ rules: parseAllowHosts(['example.com', '@registries']), ask });
    expect(await p.decide(t('example.com'))).toMatchObject({ allowed: true, by: '--allow-host example.com', exact: true });
    expect(await p.decide(t('pypi.org'))).toMatchObject({ allowed: true, by: '@registries', exact: false });
    expect(asked).toEqual([]);
  });

  it('asks once per host, and one question serves connections that arrive meanwhile', async () => {
    const { ask, asked } = asker(['once']);
    const p = new HostPolicy({ rules: [], ask });
    const all = await Promise.all([p.decide(t('a.example')), p.decide(t('a.example')), p.decide(t('a.example'))]);
    expect(all.every((d) => d.allowed && d.by === 'asked (CONFINE_ASK): once')).toBe(true);
    expect(await p.decide(t('a.example'))).toMatchObject({ allowed: true });
    expect(asked).toEqual(['a.example:443']);
  });

  it('no holds for the rest of the run', async () => {
    const { ask, asked } = asker(['no', 'once']);
    const p = new HostPolicy({ rules: [], ask });
    expect(await p.decide(t('b.example'))).toMatchObject({ allowed: false });
    expect(await p.decide(t('b.example'))).toMatchObject({ allowed: false });
    expect(asked).toEqual(['b.example:443']);
  });

  it('always keeps the host in the hosts file, which a later run reads without asking', async () => {
    const file = hostsFilePath(dir);
    const first = asker(['always']);
    expect(await new HostPolicy({ rules: [], ask: first.ask, hostsFile: file }).decide(t('c.example', 8443))).toMatchObject({ allowed: true });
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^# confine: hosts[\s\S]*\nc\.example:8443\n$/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const second = asker([]);
    expect(await new HostPolicy({ rules: [], ask: second.ask, hostsFile: file }).decide(t('c.example', 8443))).toMatchObject({ allowed: true, by: `always (${file})` });
    expect(second.asked).toEqual([]);
  });

  it('refuses without asking when nobody can be asked (--headless)', async () => {
    const p = new HostPolicy({ rules: [], noAskReason: 'not asked: --headless' });
    expect(await p.decide(t('d.example'))).toEqual({ allowed: false, by: 'not on the list', note: 'not asked: --headless' });
  });

  it('never writes the hosts file through a link', () => {
    const file = hostsFilePath(dir);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.symlinkSync(path.join(dir, 'elsewhere'), file);
    expect(() => addHost(file, 'x.example')).toThrow(/ELOOP/);
    expect(fs.existsSync(path.join(dir, 'elsewhere'))).toBe(false);
  });

  it('skips lines of the hosts file that are not hosts', () => {
    expect(parseHostsFile('# c\nok.example\nhttps://bad/\n', 'always')).toMatchObject({ rules: [{ host: 'ok.example' }], bad: ['https://bad/'] });
  });
});
