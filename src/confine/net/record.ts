// The record of what a confined command tried to reach through confine's proxy: every host,
// reached or refused, with how many connections and how many bytes each way. Printed when the
// command ends (-v) and written as JSON lines (--net-log FILE): one line per connection as it
// ends, then one line per host when the command has ended.
import * as fs from 'node:fs';

export interface ConnectionEntry {
  /** host:port as shown ([v6]:port). */
  target: string;
  host: string;
  port: number;
  /** CONNECT, or the plain HTTP request's method. */
  method: string;
  allowed: boolean;
  /** What decided: the rule's origin ('--allow-host', '@registries', 'the claude preset'),
   *  'always (~/.config/confine/hosts)', 'asked: once', 'asked: no', 'not on the list'… */
  by: string;
  /** The address connected to, when one was. */
  address?: string;
  /** Bytes from the command to the host, and back. */
  bytesOut: number;
  bytesIn: number;
  /** What the proxy answered when it did not tunnel (403, 502…). */
  status?: number;
  error?: string;
}

export interface HostSummary {
  target: string;
  host: string;
  port: number;
  allowed: boolean;
  by: string;
  connections: number;
  bytesOut: number;
  bytesIn: number;
}

export class NetRecord {
  private readonly hosts = new Map<string, HostSummary>();
  private readonly now: () => Date;

  constructor(
    private readonly logFd?: number,
    now?: () => Date,
  ) {
    this.now = now ?? (() => new Date());
  }

  add(e: ConnectionEntry): void {
    const key = `${e.allowed ? 'allowed' : 'refused'} ${e.target}`;
    let h = this.hosts.get(key);
    if (!h) {
      h = { target: e.target, host: e.host, port: e.port, allowed: e.allowed, by: e.by, connections: 0, bytesOut: 0, bytesIn: 0 };
      this.hosts.set(key, h);
    }
    h.connections++;
    h.bytesOut += e.bytesOut;
    h.bytesIn += e.bytesIn;
    this.write({ type: 'connection', time: this.now().toISOString(), ...e });
  }

  /** Every host, reached ones first, each in the order first seen. */
  summary(): HostSummary[] {
    const all = [...this.hosts.values()];
    return [...all.filter((h) => h.allowed), ...all.filter((h) => !h.allowed)];
  }

  /** The lines -v prints when the command has ended. */
  describe(): string[] {
    const hosts = this.summary();
    if (hosts.length === 0) return ['network: the command reached no host through the proxy'];
    const width = Math.max(...hosts.map((h) => h.target.length));
    return [
      `network: ${hosts.filter((h) => h.allowed).length} host(s) reached, ${hosts.filter((h) => !h.allowed).length} refused:`,
      ...hosts.map(
        (h) =>
          `  ${h.allowed ? 'reached' : 'refused'} ${h.target.padEnd(width)}  ${h.connections} connection${h.connections === 1 ? '' : 's'}, ` +
          `${formatBytes(h.bytesOut)} sent, ${formatBytes(h.bytesIn)} received (${h.by})`,
      ),
    ];
  }

  /** Writes the per-host lines to the log and closes it. */
  finish(): void {
    for (const h of this.summary()) this.write({ type: 'host', ...h });
    if (this.logFd !== undefined) {
      try {
        fs.closeSync(this.logFd);
      } catch {
        /* closed already */
      }
    }
  }

  private write(obj: object): void {
    if (this.logFd === undefined) return;
    try {
      fs.writeSync(this.logFd, `${JSON.stringify(obj)}\n`);
    } catch {
      /* a full disk loses the log, not the command */
    }
  }
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}
