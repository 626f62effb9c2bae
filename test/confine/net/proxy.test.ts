// The proxy in this process, against servers on loopback: what passes, what is refused and how,
// and that a connection carries one request. The name -> address map is the `lookup` the proxy
// takes (production passes none: the system's resolver); end-to-end tests use /etc/hosts.
import * as http from 'node:http';
import * as net from 'node:net';

import { canonicalTarget, parseHostRule, matchTarget, Target } from '../../../src/confine/net/hosts';
import { ChunkedEnd, Decision, NetProxy, fromThisUser, isInternalAddress, parseHead, tcpSocketOwner, upstreamHead } from '../../../src/confine/net/proxy';
import { NetRecord } from '../../../src/confine/net/record';

let upstream: http.Server;
let upstreamPort: number;
let seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      res.end(`hello from upstream: ${req.method} ${req.url} ${body}`);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamPort = (upstream.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => upstream.close(() => r())));
beforeEach(() => {
  seen = [];
});

/** A proxy allowing `rules`, names resolved by `names`. */
async function proxyWith(rules: string[], names: Record<string, string> = {}) {
  const parsed = rules.map((r) => parseHostRule(r));
  const record = new NetRecord();
  const proxy = new NetProxy({
    record,
    decide: async (t: Target): Promise<Decision> => {
      const rule = matchTarget(parsed, t);
      return rule ? { allowed: true, by: `--allow-host ${rule.given}`, exact: !rule.wildcard } : { allowed: false, by: 'not on the list' };
    },
    lookup: async (host) => {
      if (!(host in names)) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      return [{ address: names[host], family: 4 }];
    },
  });
  const port = await proxy.listenLoopback();
  return { proxy, port, record };
}

/** Sends raw bytes to the proxy and reads everything until it closes. */
function raw(port: number, data: string | Buffer, then?: (s: net.Socket, got: () => string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let out = '';
    s.on('data', (d) => {
      out += d.toString('latin1');
    });
    s.on('end', () => resolve(out));
    s.on('error', reject);
    s.write(data);
    then?.(s, () => out);
  });
}

describe('plain HTTP', () => {
  it('forwards one request to an allowed host, in origin form, Host from the URL, Connection: close', async () => {
    const { proxy, port, record } = await proxyWith([`pkg.test:${upstreamPort}`], { 'pkg.test': '127.0.0.1' });
    try {
      const out = await raw(port, `GET http://pkg.test:${upstreamPort}/a?b=1 HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: x\r\n\r\n`);
      expect(out).toMatch(/^HTTP\/1\.1 200/);
      expect(out).toContain('hello from upstream: GET /a?b=1');
      expect(seen[0].headers.host).toBe(`pkg.test:${upstreamPort}`);
      expect(seen[0].headers['proxy-authorization']).toBeUndefined();
      expect(seen[0].headers.connection).toBe('close');
      expect(record.summary()).toEqual([expect.objectContaining({ target: `pkg.test:${upstreamPort}`, allowed: true, connections: 1 })]);
      expect(record.summary()[0].bytesIn).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a host not on the list with a 403 naming it and the option, and never connects', async () => {
    const { proxy, port, record } = await proxyWith([], { 'pkg.test': '127.0.0.1' });
    try {
      const out = await raw(port, `GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n`);
      expect(out).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      expect(out).toContain('may not reach other.test:80');
      expect(out).toContain('--allow-host other.test');
      expect(seen).toEqual([]);
      expect(record.summary()).toEqual([expect.objectContaining({ target: 'other.test:80', allowed: false })]);
    } finally {
      await proxy.close();
    }
  });

  it('sends a body by Content-Length, and nothing the client sends after it', async () => {
    const { proxy, port } = await proxyWith([`pkg.test:${upstreamPort}`], { 'pkg.test': '127.0.0.1' });
    try {
      const smuggled = `GET http://pkg.test:${upstreamPort}/second HTTP/1.1\r\nHost: x\r\n\r\n`;
      const out = await raw(port, `POST http://pkg.test:${upstreamPort}/first HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello${smuggled}`);
      expect(out).toContain('POST /first hello');
      expect(seen.map((s) => s.url)).toEqual(['/first']);
    } finally {
      await proxy.close();
    }
  });

  it('sends a chunked body whole, and nothing after its end', async () => {
    const { proxy, port } = await proxyWith([`pkg.test:${upstreamPort}`], { 'pkg.test': '127.0.0.1' });
    try {
      const out = await raw(port, `POST http://pkg.test:${upstreamPort}/c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET /x HTTP/1.1\r\n\r\n`);
      expect(out).toContain('POST /c abcde');
      expect(seen.map((s) => s.url)).toEqual(['/c']);
    } finally {
      await proxy.close();
    }
  });

  it('refuses requests that could be read two ways', async () => {
    const { proxy, port } = await proxyWith([`pkg.test:${upstreamPort}`], { 'pkg.test': '127.0.0.1' });
    try {
      const both = await raw(port, `POST http://pkg.test:${upstreamPort}/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
      expect(both).toMatch(/^HTTP\/1\.1 400 .*[\s\S]*both Content-Length and Transfer-Encoding/);
      const two = await raw(port, `POST http://pkg.test:${upstreamPort}/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd`);
      expect(two).toMatch(/^HTTP\/1\.1 400 [\s\S]*differing Content-Length/);
      const folded = await raw(port, `GET http://pkg.test:${upstreamPort}/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n`);
      expect(folded).toMatch(/^HTTP\/1\.1 400 [\s\S]*folded/);
      const gzip = await raw(port, `POST http://pkg.test:${upstreamPort}/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n`);
      expect(gzip).toMatch(/^HTTP\/1\.1 501/);
      expect(seen).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a head longer than 32 KiB with 431', async () => {
    const { proxy, port } = await proxyWith([`pkg.test:${upstreamPort}`], { 'pkg.test': '127.0.0.1' });
    try {
      const out = await raw(port, `GET http://pkg.test:${upstreamPort}/ HTTP/1.1\r\nX: ${'a'.repeat(40 * 1024)}\r\n\r\n`);
      expect(out).toMatch(/^HTTP\/1\.1 431/);
      expect(seen).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('refuses https:// and origin-form requests: they are not for a proxy', async () => {
    const { proxy, port } = await proxyWith(['pkg.test'], { 'pkg.test': '127.0.0.1' });
    try {
      expect(await raw(port, 'GET https://pkg.test/ HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400[\s\S]*CONNECT HOST:PORT/);
      expect(await raw(port, 'GET / HTTP/1.1\r\nHost: pkg.test\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
    } finally {
      await proxy.close();
    }
  });
});

describe('CONNECT', () => {
  it('tunnels to an allowed host and counts the bytes both ways', async () => {
    const { proxy, port, record } = await proxyWith([`pkg.test:${upstreamPort}`], { 'pkg.test': '127.0.0.1' });
    try {
      const out = await raw(port, `CONNECT pkg.test:${upstreamPort} HTTP/1.1\r\nHost: pkg.test\r\n\r\n`, (s, got) => {
        const wait = setInterval(() => {
          if (got().includes('\r\n\r\n')) {
            clearInterval(wait);
            s.write('GET /tunnelled HTTP/1.1\r\nHost: pkg.test\r\nConnection: close\r\n\r\n');
          }
        }, 5);
      });
      expect(out).toMatch(/^HTTP\/1\.1 200 Connection established\r\n\r\nHTTP\/1\.1 200/);
      expect(out).toContain('GET /tunnelled');
      await new Promise((r) => setTimeout(r, 50));
      const [h] = record.summary();
      expect(h).toMatchObject({ allowed: true, connections: 1 });
      expect(h.bytesOut).toBeGreaterThan(40);
      expect(h.bytesIn).toBeGreaterThan(40);
    } finally {
      await proxy.close();
    }
  });

  it('refuses a port not allowed, and an IP literal not on the list', async () => {
    const { proxy, port } = await proxyWith(['pkg.test'], { 'pkg.test': '127.0.0.1' });
    try {
      expect(await raw(port, `CONNECT pkg.test:${upstreamPort} HTTP/1.1\r\n\r\n`)).toMatch(new RegExp(`^HTTP/1\\.1 403[\\s\\S]*--allow-host pkg.test:${upstreamPort}`));
      expect(await raw(port, `CONNECT 127.0.0.1:${upstreamPort} HTTP/1.1\r\n\r\n`)).toMatch(new RegExp(`^HTTP/1\\.1 403[\\s\\S]*--allow-host 127.0.0.1:${upstreamPort}`));
      expect(await raw(port, `CONNECT [::1]:${upstreamPort} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403[\s\S]*\[::1\]/);
    } finally {
      await proxy.close();
    }
  });

  it('never connects a *.domain name that resolves to this machine; the exact name may', async () => {
    const { proxy, port } = await proxyWith([`*.arb.test:${upstreamPort}`, `ok.arb.test:${upstreamPort}`], { 'a.arb.test': '127.0.0.1', 'ok.arb.test': '127.0.0.1' });
    try {
      const out = await raw(port, `CONNECT a.arb.test:${upstreamPort} HTTP/1.1\r\n\r\n`);
      expect(out).toMatch(/^HTTP\/1\.1 403[\s\S]*resolves to 127\.0\.0\.1/);
      const ok = await raw(port, `CONNECT ok.arb.test:${upstreamPort} HTTP/1.1\r\n\r\n`, (s) => setTimeout(() => s.end(), 50));
      expect(ok).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      await proxy.close();
    }
  });

  it('says 502 when the name does not resolve', async () => {
    const { proxy, port, record } = await proxyWith(['nowhere.test']);
    try {
      expect(await raw(port, 'CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 502[\s\S]*cannot resolve nowhere.test \(ENOTFOUND\)/);
      expect(record.summary()[0]).toMatchObject({ allowed: true, connections: 1, bytesIn: 0 });
    } finally {
      await proxy.close();
    }
  });
});

describe('on the machine\'s loopback, only the user\'s own connections', () => {
  const TCP = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:A3B2 0100007F:0C38 01 00000000:00000000 00:00000000 00000000  1005        0 129825 1',
    '   1: 0100007F:0C38 0100007F:A3B2 01 00000000:00000000 00:00000000 00000000     0        0 129826 1',
  ].join('\n');
  it('reads the owner of a socket from /proc/net/tcp', () => {
    expect(tcpSocketOwner(TCP, '127.0.0.1', 0xa3b2, true)).toBe(1005);
    expect(tcpSocketOwner(TCP, '127.0.0.1', 0x0c38, true)).toBe(0);
    expect(tcpSocketOwner(TCP, '127.0.0.1', 1, true)).toBeUndefined();
    expect(tcpSocketOwner(TCP.replace(/0100007F/g, '7F000001'), '127.0.0.1', 0xa3b2, false)).toBe(1005);
  });

  it("serves this user's connection, and closes another user's without a word", async () => {
    const record = new NetRecord();
    let owner: 'me' | 'other' = 'me';
    const proxy = new NetProxy({
      record,
      decide: async () => ({ allowed: false, by: 'not on the list' }),
      accept: (s) => fromThisUser(s, () => (owner === 'me' ? require('node:fs').readFileSync('/proc/net/tcp', 'utf8') : 'header\n')),
    });
    const port = await proxy.listenLoopback();
    try {
      expect(await raw(port, 'CONNECT x.example:443 HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 403/);
      owner = 'other';
      expect(await raw(port, 'CONNECT x.example:443 HTTP/1.1\r\n\r\n')).toBe('');
      expect(record.summary()[0].connections).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

describe('pieces', () => {
  it('knows internal addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '224.0.0.1']) {
      expect([a, isInternalAddress(a)]).toEqual([a, true]);
    }
    for (const a of ['1.1.1.1', '140.82.112.3', '2606:4700::1111', '::ffff:8.8.8.8', '172.32.0.1']) expect([a, isInternalAddress(a)]).toEqual([a, false]);
  });
  it('parses heads strictly', () => {
    expect(parseHead('GET http://a/ HTTP/1.1\r\nA: b').headers).toEqual([['A', 'b']]);
    expect(() => parseHead('GET http://a/ HTTP/2\r\n')).toThrow(/request line/);
    expect(() => parseHead('GET http://a/ HTTP/1.1\r\nBad Name: x')).toThrow(/NAME: VALUE/);
  });
  it('drops the headers Connection names', () => {
    const head = parseHead('GET http://a/x HTTP/1.1\r\nConnection: X-Secret\r\nX-Secret: 1\r\nKeep: 2');
    const up = upstreamHead(head, new URL('http://a/x'));
    expect(up.text).toBe('GET /x HTTP/1.1\r\nHost: a\r\nKeep: 2\r\nConnection: close\r\n\r\n');
  });
  it('finds the end of a chunked body fed a byte at a time', () => {
    const c = new ChunkedEnd();
    const body = Buffer.from('4;ext=1\r\nwiki\r\n0\r\nTrailer: x\r\n\r\nNEXT');
    let used = 0;
    for (let i = 0; i < body.length && !c.done; i++) used += c.feed(body.subarray(i, i + 1));
    expect(c.done).toBe(true);
    expect(used).toBe(body.length - 4);
    expect(() => new ChunkedEnd().feed(Buffer.from('zz\r\n'))).toThrow(/chunk size/);
  });
  it('canonicalTarget refuses what is no host', () => {
    expect(canonicalTarget('a b', 80)).toBeUndefined();
  });
});
