// Which hosts a confined command may reach through confine's proxy: --allow-host HOST parsed
// once into rules, and one function that says whether a host and port asked for matches one.
// Pure: no DNS, no sockets (the proxy, src/confine/net/proxy.ts, asks this module).
//
// The rules, as the man page says them:
//   - `example.com` is that host only, `*.example.com` every name under it at any depth but not
//     example.com itself (give both for both), as a TLS wildcard would, only deeper;
//   - `HOST:PORT` that port only; without a port, 443 and 80 (HTTPS and plain HTTP);
//   - names are compared without case and without a trailing dot; a name in another script is
//     turned into its punycode form (bücher.de is xn--bcher-kva.de), as clients send it;
//   - an IP address (`10.0.0.7`, `[::1]:8080`) is that address only, as the command writes it
//     or not: a name never matches an address rule, nor an address a name rule;
//   - `@NAME` is a named set of hosts (src/confine/net/sets.ts), e.g. @registries.
import * as net from 'node:net';
import { domainToASCII } from 'node:url';

/** The ports a rule without one allows. */
export const DEFAULT_PORTS: readonly number[] = [443, 80];

export interface HostRule {
  /** Lower case, no trailing dot, punycode; an IPv6 address without brackets, compressed. */
  host: string;
  /** `*.host`: names under host, at any depth, not host itself. */
  wildcard: boolean;
  /** The address's family when host is an IP address literal. */
  ip?: 4 | 6;
  /** The port, or undefined for the default ports. */
  port?: number;
  /** As the user wrote it (or the set it came from), for messages. */
  given: string;
  /** Where it came from: '--allow-host', '@registries', 'the claude preset', 'always (FILE)'. */
  from: string;
}

/** Thrown for a rule that cannot be understood; the caller makes it a usage error. */
export class HostRuleError extends Error {}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** An IP address in the one spelling the proxy compares, or undefined if `s` is not one. */
export function canonicalIp(s: string): { ip: string; family: 4 | 6 } | undefined {
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  const family = net.isIP(bare);
  if (family === 4) return { ip: bare, family: 4 };
  if (family === 6) {
    // WHATWG URL compresses and lowercases IPv6 the one way (::ffff:1.2.3.4 -> ::ffff:102:304).
    const h = new URL(`http://[${bare}]/`).hostname;
    return { ip: h.slice(1, -1), family: 6 };
  }
  return undefined;
}

/**
 * A host name as the proxy compares it: lower case, no trailing dot, punycode. Undefined for
 * something that is no host name (empty labels, characters a name cannot hold).
 */
export function canonicalName(s: string): string | undefined {
  let name = s.endsWith('.') ? s.slice(0, -1) : s;
  if (name === '' || name.length > 253) return undefined;
  if (/[^\x21-\x7e]/.test(name)) {
    // A name in another script: its punycode form, as a client sends it (IDNA, UTS 46).
    const ascii = domainToASCII(name);
    if (ascii === '') return undefined;
    name = ascii;
  }
  name = name.toLowerCase();
  const labels = name.split('.');
  if (labels.some((l) => !LABEL.test(l))) return undefined;
  // All digits and dots is an address, not a name (and not a valid one, or canonicalIp took it).
  if (/^[0-9.]+$/.test(name)) return undefined;
  return name;
}

function parsePort(s: string, what: string): number {
  if (!/^[0-9]{1,5}$/.test(s)) throw new HostRuleError(`${what}: the port '${s}' is not a number from 1 to 65535`);
  const port = Number(s);
  if (port < 1 || port > 65535) throw new HostRuleError(`${what}: the port ${port} is not from 1 to 65535`);
  return port;
}

/**
 * One --allow-host value (not a @set): HOST, *.DOMAIN, HOST:PORT, an IPv4 address, [IPv6] or
 * [IPv6]:PORT, or a bare IPv6 address. Throws HostRuleError saying what is wrong.
 */
export function parseHostRule(given: string, from = '--allow-host'): HostRule {
  const what = `${from} '${given}'`;
  const s = given.trim();
  if (s === '') throw new HostRuleError(`${from}: an empty host`);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) throw new HostRuleError(`${what}: give a host, not a URL (e.g. ${hostOfUrl(s) ?? 'example.com'})`);
  if (/[/?#@\s\\]/.test(s)) throw new HostRuleError(`${what}: a host may not hold '/', '?', '#', '@', '\\' or spaces`);
  // [v6] or [v6]:PORT
  const bracket = /^\[([^\]]+)\](?::(.*))?$/.exec(s);
  if (bracket) {
    const ip = canonicalIp(bracket[1]);
    if (!ip || ip.family !== 6) throw new HostRuleError(`${what}: '${bracket[1]}' is not an IPv6 address`);
    return { host: ip.ip, wildcard: false, ip: 6, port: bracket[2] !== undefined ? parsePort(bracket[2], what) : undefined, given, from };
  }
  // A bare IPv6 address (two colons or more): no port can be told from it.
  if ((s.match(/:/g) ?? []).length >= 2) {
    const ip = canonicalIp(s);
    if (!ip) throw new HostRuleError(`${what}: not an IPv6 address (write one with a port as [ADDRESS]:PORT)`);
    return { host: ip.ip, wildcard: false, ip: 6, port: undefined, given, from };
  }
  let hostPart = s;
  let port: number | undefined;
  const colon = s.lastIndexOf(':');
  if (colon >= 0) {
    hostPart = s.slice(0, colon);
    port = parsePort(s.slice(colon + 1), what);
  }
  if (hostPart === '*' || hostPart === '*.') throw new HostRuleError(`${what}: '*' would allow every host; to leave the network open, give no --allow-host`);
  let wildcard = false;
  if (hostPart.startsWith('*.')) {
    wildcard = true;
    hostPart = hostPart.slice(2);
  }
  if (hostPart.includes('*')) throw new HostRuleError(`${what}: '*' may only start a name, as in *.example.com`);
  const ip = canonicalIp(hostPart);
  if (ip) {
    if (wildcard) throw new HostRuleError(`${what}: an address cannot have subdomains`);
    return { host: ip.ip, wildcard: false, ip: ip.family, port, given, from };
  }
  const name = canonicalName(hostPart);
  if (name === undefined) throw new HostRuleError(`${what}: '${hostPart}' is not a host name`);
  if (wildcard && !name.includes('.')) throw new HostRuleError(`${what}: *.${name} would allow a whole top-level domain; name a domain under it`);
  return { host: name, wildcard, port, given, from };
}

function hostOfUrl(s: string): string | undefined {
  try {
    return new URL(s).host || undefined;
  } catch {
    return undefined;
  }
}

/** A host the command asked for, in the form rules are compared with. */
export interface Target {
  host: string;
  ip?: 4 | 6;
  port: number;
}

/** The host and port as a client wrote them (CONNECT's authority, a URL's host), canonical. */
export function canonicalTarget(host: string, port: number): Target | undefined {
  const ip = canonicalIp(host);
  if (ip) return { host: ip.ip, ip: ip.family, port };
  const name = canonicalName(host);
  return name === undefined ? undefined : { host: name, port };
}

/** Whether one rule allows the target. */
export function ruleMatches(rule: HostRule, target: Target): boolean {
  const portOk = rule.port === undefined ? DEFAULT_PORTS.includes(target.port) : rule.port === target.port;
  if (!portOk) return false;
  if (rule.ip !== undefined || target.ip !== undefined) return rule.ip === target.ip && rule.host === target.host;
  if (rule.wildcard) return target.host.endsWith(`.${rule.host}`);
  return rule.host === target.host;
}

/**
 * The rule that allows the target, if any: a rule naming the host itself before a *.domain,
 * and the user's own --allow-host before a set's or a preset's (the proxy lets only a host named
 * itself resolve to an internal address).
 */
export function matchTarget(rules: readonly HostRule[], target: Target): HostRule | undefined {
  let best: HostRule | undefined;
  let bestScore = -1;
  for (const r of rules) {
    if (!ruleMatches(r, target)) continue;
    const score = (r.wildcard ? 0 : 2) + (r.from === '--allow-host' ? 1 : 0);
    if (score > bestScore) {
      best = r;
      bestScore = score;
    }
  }
  return best;
}

/** host:port as shown to people: [v6]:port for IPv6. */
export function showTarget(t: Target): string {
  return t.ip === 6 ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`;
}

/**
 * What to give --allow-host to allow this target: the host alone when the port is a default
 * one, else HOST:PORT.
 */
export function allowHostFor(t: Target): string {
  const host = t.ip === 6 ? `[${t.host}]` : t.host;
  return DEFAULT_PORTS.includes(t.port) ? host : `${host}:${t.port}`;
}

/** A rule as --explain shows it. */
export function showRule(r: HostRule): string {
  const host = r.ip === 6 && r.port !== undefined ? `[${r.host}]` : r.host;
  return `${r.wildcard ? '*.' : ''}${host}${r.port !== undefined ? `:${r.port}` : ''}`;
}
