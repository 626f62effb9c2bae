// The library API takes --allow-host and --net-log as allowHost and netLog, checked as the
// command line checks them (a usage error before anything is made).
import { confine } from '../../../src/index';

describe('confine({ allowHost })', () => {
  it('refuses a URL where a host is wanted, as --allow-host does', async () => {
    await expect(confine({ command: 'true', dir: '/tmp', allowHost: ['https://example.com/'] })).rejects.toMatchObject({
      code: 'ARB_USAGE',
      message: expect.stringContaining('give a host, not a URL'),
    });
  });
  it('refuses netLog without allowHost', async () => {
    await expect(confine({ command: 'true', dir: '/tmp', netLog: '/tmp/x.jsonl' })).rejects.toMatchObject({ code: 'ARB_USAGE', message: expect.stringContaining('--net-log') });
  });
});
