// --allow-host in the bwrap jail, the pure part: bwrap gets the network namespace too and waits
// on --block-fd until confine has put the proxy's listener in it.
import { BLOCK_FD, BwrapPlan, STATUS_FD, bwrapArgs, childPidFromStatus } from '../../../src/confine/bwrap';

const plan = (over: Partial<BwrapPlan> = {}): BwrapPlan => ({
  dir: '/home/u/src/proj.1',
  homes: ['/home/u'],
  readable: [],
  writable: ['/tmp'],
  root: [{ name: 'usr', kind: 'other' }],
  file: '/usr/bin/curl',
  args: ['https://example.com/'],
  statusFd: STATUS_FD,
  ...over,
});

describe('bwrap with --allow-host', () => {
  it('shares the network without it', () => {
    const a = bwrapArgs(plan());
    expect(a).toContain('--share-net');
    expect(a).not.toContain('--block-fd');
  });

  it('unshares the network, and waits on the block descriptor before the command', () => {
    const a = bwrapArgs(plan({ proxyNet: true, blockFd: BLOCK_FD }));
    expect(a).toContain('--unshare-all');
    expect(a).not.toContain('--share-net');
    const block = a.indexOf('--block-fd');
    expect(a[block + 1]).toBe(String(BLOCK_FD));
    expect(block).toBeLessThan(a.indexOf('--'));
    expect(a.slice(a.indexOf('--'))).toEqual(['--', '/usr/bin/curl', 'https://example.com/']);
  });

  it('reads the sandbox pid from the first JSON status, whole or not yet', () => {
    expect(childPidFromStatus('{\n    "child-pid": 4242,\n    "net-namespace": 1\n}\n{"exit-code": 0}\n')).toBe(4242);
    expect(childPidFromStatus('{\n    "child-pid": 42')).toBeUndefined();
    expect(childPidFromStatus('{"child-pid": "x"}')).toBeUndefined();
    expect(childPidFromStatus('')).toBeUndefined();
  });
});
