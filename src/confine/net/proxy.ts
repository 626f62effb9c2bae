// confine's HTTP proxy: the only way out of the command's network namespace (or, with Landlock
// alone, the only TCP port it may connect to). It runs in confine, outside the sandbox, and for
// each connection reads one request:
//   - CONNECT HOST:PORT (HTTPS and anything else tunnelled): a tunnel to HOST:PORT;
//   - METHOD http://HOST[:PORT]/PATH (plain HTTP): that one request, forwarded, with
//     `Connection: close` both ways, so a connection carries exactly one request.
// Before connecting it asks the host policy (src/confine/net/policy.ts) whether HOST:PORT may be
// reached; a refusal is a 403 whose body names the host and the --allow-host that would allow
// it. The proxy resolves names itself and connects to the address it resolved (so a name is
// judged once), and never to a loopback, private or link-local address unless that address, or
// the very name (not a *.domain, a set or a preset), was allowed: the proxy runs outside, where
// 127.0.0.1 is the user's own services.
//
// The request head is read whole before anything is decided (at most 32 KiB, 30 s); it is
// parsed strictly (CRLF lines, token header names, no folded lines, no NUL), and a plain request
// with both Content-Length and Transfer-Encoding, differing Content-Lengths, or a coding other
// than chunked is refused, so a request cannot be read one way here and another way upstream.
import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';

import { Target, allowHostFor, canonicalIp, canonicalTarget, showTarget } from './hosts';
import { NetRecord } from './record';

export const MAX_HEAD = 32 * 1024;
const HEAD_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 30_000;

export interface Decision {
  allowed: boolean;
  /** What decided (for the record and messages). */
  by: string;
  /** Allowed by this very name or address (an --allow-host HOST, an answer about it): then it
   *  may resolve to an internal address. A *.domain, a set or a preset may not. */
  exact?: boolean;
  /** Why it was not asked, or what the answer was, for the 403's body. */
  note?: string;
}

export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

export interface ProxyOptions {
  decide: (target: Target) => Promise<Decision>;
  record: NetRecord;
  /** Resolves a name (default: the system's resolver, dns.lookup, as every program does). */
  lookup?: Lookup;
  /** How the program is named in messages ("confine", "arb confine"). */
  program?: string;
  /** Whether to serve a connection at all (on the machine's loopback: only the user's own). */
  accept?: (socket: net.Socket) => boolean;
}

const systemLookup: Lookup = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

// --- addresses that are not the internet -----------------------------------------------------

function v4Bytes(ip: string): number[] {
  return ip.split('.').map(Number);
}

/** Whether an address is loopback, private, link-local, unspecified, shared or multicast. */
export function isInternalAddress(address: string): boolean {
  const c = canonicalIp(address);
  if (!c) return true;
  if (c.family === 4) {
    const [a, b] = v4Bytes(c.ip);
    return (
      a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || a >= 224
    );
  }
  const ip = c.ip;
  if (ip === '::' || ip === '::1') return true;
  // IPv4-mapped and -compatible forms: judged as the IPv4 address they carry.
  const mapped = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip);
  if (mapped) {
    const hi = parseInt(mapped[1], 16);
    const lo = parseInt(mapped[2], 16);
    return isInternalAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  const first = parseInt(ip.split(':')[0] || '0', 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/**
 * The uid that owns the IPv4 TCP socket bound to address:port, read from /proc/net/tcp's text
 * (addresses in the kernel's byte order, ports in hex), or undefined if there is none.
 */
export function tcpSocketOwner(procNetTcp: string, address: string, port: number, littleEndian = os.endianness() === 'LE'): number | undefined {
  const bytes = address.split('.').map(Number);
  if (bytes.length !== 4 || bytes.some((b) => !Number.isInteger(b) || b < 0 || b > 255)) return undefined;
  const ordered = littleEndian ? [...bytes].reverse() : bytes;
  const want = `${ordered.map((b) => b.toString(16).padStart(2, '0')).join('')}:${port.toString(16).padStart(4, '0')}`.toUpperCase();
  for (const line of procNetTcp.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === want) return Number(f[7]);
  }
  return undefined;
}

/** Whether a connection to a loopback listener comes from a socket of this user. */
export function fromThisUser(socket: net.Socket, read: () => string = () => fs.readFileSync('/proc/net/tcp', 'utf8')): boolean {
  const address = socket.remoteAddress?.replace(/^::ffff:/, '');
  const port = socket.remotePort;
  if (!address || !port) return false;
  try {
    return tcpSocketOwner(read(), address, port) === process.getuid?.();
  } catch {
    return false;
  }
}

// --- the request head ------------------------------------------------------------------------

export interface RequestHead {
  method: string;
  target: string;
  version: string;
  headers: [string, string][];
}

export class BadRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parses a request head (without the final empty line). Throws BadRequest. */
export function parseHead(text: string): RequestHead {
  const lines = text.split('\r\n');
  const m = /^([A-Z]+) (\S+) (HTTP\/1\.[01])$/.exec(lines[0]);
  if (!m) throw new BadRequest(400, 'the request line is not METHOD TARGET HTTP/1.x');
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (/[\0\r\n]/.test(line)) throw new BadRequest(400, 'a header holds a NUL, CR or LF');
    if (line.startsWith(' ') || line.startsWith('\t')) throw new BadRequest(400, 'folded header lines are not accepted');
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name)) throw new BadRequest(400, `a header line is not NAME: VALUE`);
    headers.push([name, line.slice(colon + 1).trim()]);
  }
  return { method: m[1], target: m[2], version: m[3], headers };
}

function headerValues(head: RequestHead, name: string): string[] {
  return head.headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
}

/** CONNECT's authority: HOST:PORT or [V6]:PORT. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(authority);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1] ?? m[2], port };
}

/** Headers that belong to one hop (RFC 9110 7.6.1), never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'upgrade', 'host']);

/**
 * The request as sent upstream: origin-form, Host from the URL, hop-by-hop headers (and those
 * Connection names) dropped, Connection: close. Returns how the body is delimited.
 */
export function upstreamHead(head: RequestHead, url: URL): { text: string; body: 'none' | 'chunked' | number } {
  const named = new Set(headerValues(head, 'connection').flatMap((v) => v.split(',').map((s) => s.trim().toLowerCase())));
  const te = headerValues(head, 'transfer-encoding');
  const cl = headerValues(head, 'content-length');
  let body: 'none' | 'chunked' | number = 'none';
  if (te.length > 0) {
    if (cl.length > 0) throw new BadRequest(400, 'both Content-Length and Transfer-Encoding');
    if (te.length !== 1 || te[0].toLowerCase() !== 'chunked') throw new BadRequest(501, `Transfer-Encoding '${te.join(', ')}' is not supported (only chunked)`);
    body = 'chunked';
  } else if (cl.length > 0) {
    const values = new Set(cl.flatMap((v) => v.split(',').map((s) => s.trim())));
    if (values.size !== 1) throw new BadRequest(400, 'differing Content-Length headers');
    const v = [...values][0];
    if (!/^[0-9]{1,15}$/.test(v)) throw new BadRequest(400, `Content-Length '${v}' is not a number`);
    body = Number(v) === 0 ? 'none' : Number(v);
  }
  const lines = [`${head.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (const [n, v] of head.headers) {
    const lower = n.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    if (lower === 'transfer-encoding') continue;
    lines.push(`${n}: ${v}`);
  }
  if (body === 'chunked') lines.push('Transfer-Encoding: chunked');
  lines.push('Connection: close');
  return { text: `${lines.join('\r\n')}\r\n\r\n`, body };
}

/**
 * Finds where a chunked body ends, fed the bytes as they come: feed() returns how many of the
 * bytes given belong to the body (all of them until the end is seen). Throws BadRequest on a
 * malformed one.
 */
export class ChunkedEnd {
  done = false;
  private state: 'size' | 'data' | 'data-cr' | 'data-lf' | 'trailer' = 'size';
  private line = '';
  private remaining = 0;
  private trailerBytes = 0;

  feed(buf: Buffer): number {
    let i = 0;
    while (i < buf.length && !this.done) {
      const c = buf[i];
      switch (this.state) {
        case 'size':
          if (c === 0x0a) {
            const sizeText = this.line.replace(/\r$/, '').split(';')[0].trim();
            if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) throw new BadRequest(400, 'a malformed chunk size');
            this.remaining = parseInt(sizeText, 16);
            this.line = '';
            this.state = this.remaining === 0 ? 'trailer' : 'data';
          } else {
            this.line += String.fromCharCode(c);
            if (this.line.length > 1024) throw new BadRequest(400, 'a chunk size line too long');
          }
          i++;
          break;
        case 'data': {
          const take = Math.min(this.remaining, buf.length - i);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) this.state = 'data-cr';
          break;
        }
        case 'data-cr':
          if (c !== 0x0d) throw new BadRequest(400, 'a chunk not followed by CRLF');
          this.state = 'data-lf';
          i++;
          break;
        case 'data-lf':
          if (c !== 0x0a) throw new BadRequest(400, 'a chunk not followed by CRLF');
          this.state = 'size';
          i++;
          break;
        case 'trailer':
          i++;
          if (++this.trailerBytes > MAX_HEAD) throw new BadRequest(431, 'trailers too large');
          if (c === 0x0a) {
            if (this.line.replace(/\r$/, '') === '') this.done = true;
            this.line = '';
          } else {
            this.line += String.fromCharCode(c);
          }
          break;
      }
    }
    return i;
  }
}

// --- the proxy -------------------------------------------------------------------------------

function reply(socket: net.Socket, status: number, reason: string, body: string): void {
  const payload = Buffer.from(body, 'utf8');
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n${body}`);
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 431: 'Request Header Fields Too Large', 501: 'Not Implemented', 502: 'Bad Gateway', 504: 'Gateway Timeout' };

export class NetProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly lookup: Lookup;
  private readonly program: string;

  constructor(private readonly options: ProxyOptions) {
    this.lookup = options.lookup ?? systemLookup;
    this.program = options.program ?? 'confine';
    this.server = net.createServer({ pauseOnConnect: false }, (s) => this.handle(s));
    this.server.on('error', () => {
      /* accept errors (EMFILE) drop that connection only */
    });
  }

  /** Serves on a listening socket made elsewhere (inside the command's network namespace). */
  serveFd(fd: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ fd }, () => {
        this.server.removeListener('error', reject);
        resolve();
      });
    });
  }

  /** Serves on 127.0.0.1 at a port the kernel picks; resolves with the port. */
  listenLoopback(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.removeListener('error', reject);
        // Listening from the plan on: a run that fails before the command starts is not kept
        // alive by it (while the command runs, confine waits for the command anyway).
        this.server.unref();
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private refusal(target: Target, d: Decision): string {
    const allow = allowHostFor(target);
    return (
      `${this.program}: the confined command may not reach ${showTarget(target)}: it is not among the hosts allowed (${d.by}${d.note ? `; ${d.note}` : ''}).\n` +
      `To allow it, run confine with --allow-host ${allow}\n`
    );
  }

  private handle(client: net.Socket): void {
    if (this.options.accept && !this.options.accept(client)) {
      client.destroy();
      return;
    }
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffered = Buffer.alloc(0);
    // A client that never finishes its head is dropped; the timer never keeps confine alive.
    const timer = setTimeout(() => client.destroy(), HEAD_TIMEOUT_MS);
    timer.unref();
    client.on('close', () => clearTimeout(timer));
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buffered.length > MAX_HEAD) {
          client.removeListener('data', onData);
          clearTimeout(timer);
          reply(client, 431, REASONS[431], `${this.program}: the request head is longer than ${MAX_HEAD} bytes\n`);
        }
        return;
      }
      client.removeListener('data', onData);
      client.pause();
      clearTimeout(timer);
      if (end > MAX_HEAD) {
        reply(client, 431, REASONS[431], `${this.program}: the request head is longer than ${MAX_HEAD} bytes\n`);
        return;
      }
      const rest = buffered.subarray(end + 4);
      this.request(client, buffered.subarray(0, end).toString('latin1'), rest).catch(() => client.destroy());
    };
    client.on('data', onData);
  }

  private async request(client: net.Socket, headText: string, rest: Buffer): Promise<void> {
    let head: RequestHead;
    try {
      head = parseHead(headText);
    } catch (err) {
      const e = err as BadRequest;
      reply(client, e.status, REASONS[e.status], `${this.program}: ${e.message}\n`);
      return;
    }
    let authority: { host: string; port: number } | undefined;
    let url: URL | undefined;
    if (head.method === 'CONNECT') {
      authority = parseAuthority(head.target);
      if (!authority) {
        reply(client, 400, REASONS[400], `${this.program}: CONNECT needs HOST:PORT, not '${head.target}'\n`);
        return;
      }
    } else {
      try {
        url = new URL(head.target);
      } catch {
        url = undefined;
      }
      if (!url || url.protocol !== 'http:' || !head.target.toLowerCase().startsWith('http://') || url.username || url.password) {
        reply(
          client,
          400,
          REASONS[400],
          `${this.program}: this is confine's proxy: ask for http://HOST/PATH, or CONNECT HOST:PORT for anything else (HTTPS), not '${head.target.slice(0, 200)}'\n`,
        );
        return;
      }
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      authority = { host, port: url.port ? Number(url.port) : 80 };
    }
    const target = canonicalTarget(authority.host, authority.port);
    const shown = target ? showTarget(target) : `${authority.host}:${authority.port}`;
    const base = { target: shown, host: target?.host ?? authority.host, port: authority.port, method: head.method, bytesOut: 0, bytesIn: 0 };
    if (!target) {
      this.options.record.add({ ...base, allowed: false, by: 'not a host name', status: 400 });
      reply(client, 400, REASONS[400], `${this.program}: '${authority.host}' is not a host name\n`);
      return;
    }
    const decision = await this.options.decide(target);
    if (!decision.allowed) {
      this.options.record.add({ ...base, allowed: false, by: decision.by, status: 403 });
      reply(client, 403, REASONS[403], this.refusal(target, decision));
      return;
    }
    let forward: ReturnType<typeof upstreamHead> | undefined;
    if (url) {
      try {
        forward = upstreamHead(head, url);
      } catch (err) {
        const e = err as BadRequest;
        this.options.record.add({ ...base, allowed: true, by: decision.by, status: e.status, error: e.message });
        reply(client, e.status, REASONS[e.status], `${this.program}: ${e.message}\n`);
        return;
      }
    }

    // The address: the literal itself, or what the name resolves to now, once.
    let addresses: { address: string; family: number }[];
    if (target.ip !== undefined) {
      addresses = [{ address: target.host, family: target.ip }];
    } else {
      try {
        addresses = await this.lookup(target.host);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'failed';
        this.options.record.add({ ...base, allowed: true, by: decision.by, status: 502, error: `cannot resolve (${code})` });
        reply(client, 502, REASONS[502], `${this.program}: cannot resolve ${target.host} (${code})\n`);
        return;
      }
      if (!decision.exact) {
        const external = addresses.filter((a) => !isInternalAddress(a.address));
        if (external.length < addresses.length) {
          const internal = addresses.find((a) => isInternalAddress(a.address))?.address;
          this.options.record.add({ ...base, allowed: false, by: `${decision.by}, but resolves to ${internal}`, status: 403 });
          reply(
            client,
            403,
            REASONS[403],
            `${this.program}: ${target.host} resolves to ${internal}, an address on this machine or its network, which ${decision.by} does not allow.\n` +
              `To allow it, run confine with --allow-host ${allowHostFor(target)}\n`,
          );
          return;
        }
      }
    }
    if (addresses.length === 0) {
      reply(client, 502, REASONS[502], `${this.program}: ${target.host} has no address\n`);
      return;
    }

    const upstream = await connectFirst(addresses, target.port);
    if ('error' in upstream) {
      this.options.record.add({ ...base, allowed: true, by: decision.by, status: 502, error: upstream.error });
      reply(client, 502, REASONS[502], `${this.program}: cannot connect to ${shown}: ${upstream.error}\n`);
      return;
    }
    const up = upstream.socket;
    this.sockets.add(up);
    const counts = { bytesOut: 0, bytesIn: 0 };
    let recorded = false;
    const finish = () => {
      if (recorded) return;
      recorded = true;
      this.options.record.add({ ...base, allowed: true, by: decision.by, address: upstream.address, ...counts });
    };
    up.on('close', () => {
      this.sockets.delete(up);
      finish();
      client.end();
    });
    client.on('close', () => {
      up.destroy();
      finish();
    });
    up.on('error', () => client.destroy());
    up.on('data', (d: Buffer) => {
      counts.bytesIn += d.length;
    });
    up.pipe(client);

    if (!forward) {
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      if (rest.length) {
        counts.bytesOut += rest.length;
        up.write(rest);
      }
      client.on('data', (d: Buffer) => {
        counts.bytesOut += d.length;
      });
      client.pipe(up);
      client.resume();
      return;
    }

    // Plain HTTP: the head, then exactly the body it announced; nothing after it.
    counts.bytesOut += Buffer.byteLength(forward.text, 'latin1');
    up.write(forward.text, 'latin1');
    const body = forward.body;
    if (body === 'none') return;
    const chunked = body === 'chunked' ? new ChunkedEnd() : undefined;
    let left = typeof body === 'number' ? body : 0;
    const take = (d: Buffer): boolean => {
      let n: number;
      if (chunked) {
        try {
          n = chunked.feed(d);
        } catch {
          up.destroy();
          client.destroy();
          return true;
        }
      } else {
        n = Math.min(left, d.length);
        left -= n;
      }
      if (n > 0) {
        counts.bytesOut += n;
        up.write(d.subarray(0, n));
      }
      return chunked ? chunked.done : left === 0;
    };
    if (rest.length && take(rest)) return;
    const onBody = (d: Buffer) => {
      if (take(d)) {
        client.removeListener('data', onBody);
        client.pause();
      }
    };
    client.on('data', onBody);
    client.resume();
  }
}

/** Connects to the first address that answers (each in turn). */
function connectFirst(addresses: { address: string; family: number }[], port: number): Promise<{ socket: net.Socket; address: string } | { error: string }> {
  return new Promise((resolve) => {
    let i = 0;
    let lastError = 'no address';
    const next = () => {
      if (i >= addresses.length) {
        resolve({ error: lastError });
        return;
      }
      const a = addresses[i++];
      const s = net.connect({ host: a.address, port, family: a.family === 6 ? 6 : 4 });
      const timer = setTimeout(() => s.destroy(new Error('timed out')), CONNECT_TIMEOUT_MS);
      timer.unref();
      s.once('connect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve({ socket: s, address: a.address });
      });
      s.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        lastError = err.code ? `${err.code}` : err.message;
        s.destroy();
        next();
      });
    };
    next();
  });
}
