import { HostRuleError, allowHostFor, canonicalTarget, matchTarget, parseHostRule, showRule } from '../../../src/confine/net/hosts';
import { HOST_SETS, PRESET_HOSTS, parseAllowHosts, presetHostRules } from '../../../src/confine/net/sets';

const t = (host: string, port = 443) => canonicalTarget(host, port)!;
const allows = (rule: string, host: string, port = 443) => matchTarget([parseHostRule(rule)], t(host, port)) !== undefined;

describe('parseHostRule', () => {
  it('takes a name, lower-cased, without its trailing dot', () => {
    expect(parseHostRule('Example.COM.')).toMatchObject({ host: 'example.com', wildcard: false, port: undefined });
  });
  it('takes HOST:PORT and *.DOMAIN', () => {
    expect(parseHostRule('example.com:8443')).toMatchObject({ host: 'example.com', port: 8443 });
    expect(parseHostRule('*.example.com')).toMatchObject({ host: 'example.com', wildcard: true });
  });
  it('takes IPv4 and IPv6 literals, with and without a port', () => {
    expect(parseHostRule('10.0.0.7:22')).toMatchObject({ host: '10.0.0.7', ip: 4, port: 22 });
    expect(parseHostRule('[::1]:8080')).toMatchObject({ host: '::1', ip: 6, port: 8080 });
    expect(parseHostRule('2001:DB8:0:0::1')).toMatchObject({ host: '2001:db8::1', ip: 6, port: undefined });
  });
  it('turns a name in another script into punycode', () => {
    expect(parseHostRule('bücher.de').host).toBe('xn--bcher-kva.de');
  });
  it.each([
    ['', /empty/],
    ['https://example.com/x', /not a URL \(e\.g\. example\.com\)/],
    ['example.com/path', /may not hold/],
    ['user@example.com', /may not hold/],
    ['*', /every host/],
    ['*.com', /top-level domain/],
    ['ex*ample.com', /only start a name/],
    ['example.com:0', /port 0/],
    ['example.com:70000', /port 70000/],
    ['example.com:http', /not a number/],
    ['exa_mple..com', /not a host name/],
    ['*.10.0.0.1', /not a host name|subdomains/],
    ['[example.com]', /not an IPv6 address/],
    ['999.1.1.1', /not a host name/],
  ])('refuses %j', (given, message) => {
    expect(() => parseHostRule(given)).toThrow(HostRuleError);
    expect(() => parseHostRule(given)).toThrow(message);
  });
});

describe('matching', () => {
  it('a name matches itself on the default ports 443 and 80 only', () => {
    expect(allows('example.com', 'example.com', 443)).toBe(true);
    expect(allows('example.com', 'example.com', 80)).toBe(true);
    expect(allows('example.com', 'example.com', 22)).toBe(false);
    expect(allows('example.com', 'www.example.com')).toBe(false);
    expect(allows('example.com', 'example.com.evil.org')).toBe(false);
  });
  it('is blind to case and a trailing dot in the request too', () => {
    expect(allows('example.com', 'EXAMPLE.com.')).toBe(true);
  });
  it('HOST:PORT matches that port only', () => {
    expect(allows('example.com:8443', 'example.com', 8443)).toBe(true);
    expect(allows('example.com:8443', 'example.com', 443)).toBe(false);
  });
  it('*.DOMAIN matches names under it at any depth, not the domain itself', () => {
    expect(allows('*.example.com', 'a.example.com')).toBe(true);
    expect(allows('*.example.com', 'a.b.example.com')).toBe(true);
    expect(allows('*.example.com', 'example.com')).toBe(false);
    expect(allows('*.example.com', 'badexample.com')).toBe(false);
  });
  it('an address matches only that address, written any way; names never match addresses', () => {
    expect(allows('[::1]:8080', '0:0:0:0:0:0:0:1', 8080)).toBe(true);
    expect(allows('127.0.0.1:8080', '::1', 8080)).toBe(false);
    expect(allows('localhost:8080', '127.0.0.1', 8080)).toBe(false);
    expect(allows('127.0.0.1:8080', 'localhost', 8080)).toBe(false);
  });
  it('punycode and the Unicode spelling are the same host', () => {
    expect(allows('bücher.de', 'xn--bcher-kva.de')).toBe(true);
  });
});

describe('messages', () => {
  it('says what --allow-host would allow a target', () => {
    expect(allowHostFor(t('example.org', 443))).toBe('example.org');
    expect(allowHostFor(t('example.org', 22))).toBe('example.org:22');
    expect(allowHostFor(t('::1', 8080))).toBe('[::1]:8080');
    expect(showRule(parseHostRule('*.example.com:8443'))).toBe('*.example.com:8443');
  });
});

describe('sets and presets', () => {
  it('@registries expands to the registries, each a valid rule', () => {
    const rules = parseAllowHosts(['@registries', 'example.com']);
    const hosts = rules.map((r) => r.host);
    for (const h of ['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'crates.io', 'static.crates.io', 'index.crates.io', 'proxy.golang.org', 'sum.golang.org', 'github.com', 'api.github.com', 'codeload.github.com', 'objects.githubusercontent.com', 'raw.githubusercontent.com']) {
      expect(hosts).toContain(h);
    }
    expect(rules.find((r) => r.host === 'pypi.org')?.from).toBe('@registries');
    expect(hosts[hosts.length - 1]).toBe('example.com');
    expect(HOST_SETS.length).toBeGreaterThan(0);
  });
  it('refuses an unknown set, naming the known ones', () => {
    expect(() => parseAllowHosts(['@nope'])).toThrow(/no such set; the sets are @registries/);
  });
  it('each preset carries its API hosts', () => {
    expect(presetHostRules('claude').map((r) => r.host)).toContain('api.anthropic.com');
    expect(presetHostRules('codex').map((r) => r.host)).toEqual(expect.arrayContaining(['api.openai.com', 'chatgpt.com']));
    expect(presetHostRules('opencode').length).toBeGreaterThan(0);
    for (const hosts of Object.values(PRESET_HOSTS)) for (const h of hosts) expect(() => parseHostRule(h)).not.toThrow();
    expect(presetHostRules(undefined)).toEqual([]);
  });
});
