// --allow-host in the bwrap jail, the pure part: bwrap gets the network namespace too (no
// --share-net), and the launcher it runs makes the proxy's listener in it, as in the landlock
// jail's own namespace; the same arguments otherwise.
import { BwrapPlan, STATUS_FD, bwrapArgs } from '../../../src/confine/bwrap';

const plan = (over: Partial<BwrapPlan> = {}): BwrapPlan => ({
  dir: '/home/u/src/proj.1',
  homes: ['/home/u'],
  mounts: { readOnlyRoot: true, ops: [] },
  root: [{ name: 'usr', kind: 'other' }],
  shareNetwork: true,
  file: '/opt/arb/arb-launcher',
  args: ['--plan-fd', '4', '--report-fd', '5'],
  statusFd: STATUS_FD,
  ...over,
});

describe('bwrap with --allow-host', () => {
  it('shares the network without it', () => {
    expect(bwrapArgs(plan())).toContain('--share-net');
  });

  it('unshares the network with it, and runs the launcher (which makes the listener inside) as before', () => {
    const shared = bwrapArgs(plan());
    const a = bwrapArgs(plan({ shareNetwork: false }));
    expect(a).toContain('--unshare-all');
    expect(a).not.toContain('--share-net');
    expect(a).not.toContain('--block-fd');
    expect(a).toEqual(shared.filter((x) => x !== '--share-net'));
    expect(a.slice(a.indexOf('--'))).toEqual(['--', '/opt/arb/arb-launcher', '--plan-fd', '4', '--report-fd', '5']);
  });
});
