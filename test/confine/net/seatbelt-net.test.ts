// --allow-host on macOS: the Seatbelt profile leaves the network to the proxy's loopback port.
// Pure functions, tested on every platform.
import { resolveSeatbeltPolicy, seatbeltArgv, seatbeltNetworkRules, seatbeltProfile, SeatbeltPolicy } from '../../../src/confine/seatbelt';

const policy: SeatbeltPolicy = { home: '/Users/u', directory: '/Users/u/src/p.1', readable: [], writable: [], command: ['/bin/sh'] };

describe('Seatbelt with --allow-host', () => {
  it('without a proxy port, the network is left as it is', () => {
    expect(seatbeltProfile(policy).profile).not.toContain('network');
  });

  it("allows connecting only to the proxy's loopback port, unix sockets but the resolver, and serving on loopback only", () => {
    const { profile } = seatbeltProfile({ ...policy, proxyPort: 41234 });
    const lines = profile.split('\n');
    const at = (l: string) => lines.indexOf(l);
    expect(at('(deny network-outbound)')).toBeGreaterThan(0);
    expect(at('(allow network-outbound (remote ip "localhost:41234"))')).toBeGreaterThan(at('(deny network-outbound)'));
    expect(at('(deny network-outbound (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))')).toBeGreaterThan(at('(allow network-outbound (remote unix-socket))'));
    expect(at('(allow network-bind network-inbound (local ip "localhost:*"))')).toBeGreaterThan(at('(deny network-bind network-inbound)'));
    // Nothing after the network rules allows more of the network (later rules win).
    const after = lines.slice(at('(allow network-bind network-inbound (local ip "localhost:*"))') + 1).join('\n');
    expect(after).not.toMatch(/network/);
    expect(profile.match(/remote ip/g)).toHaveLength(1);
  });

  it('refuses a port that is not one: it is the one value pasted into the text', () => {
    for (const bad of [0, 65536, 1.5, NaN, -1]) expect(() => seatbeltNetworkRules(bad)).toThrow(/not a port/);
  });

  it('keeps the port through path resolution and into the argument list', () => {
    const view = { realpath: (p: string) => p, isDirectory: () => true };
    const resolved = resolveSeatbeltPolicy({ ...policy, proxyPort: 5555 }, view as never);
    expect(resolved.proxyPort).toBe(5555);
    const argv = seatbeltArgv(resolved);
    expect(argv[2]).toContain('(remote ip "localhost:5555")');
  });
});
