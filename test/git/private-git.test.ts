// The private repository arb runs git in: git's configuration there is arb's alone.
import { withPrivateRepo } from '../../src/git/private-git';

describe('withPrivateRepo', () => {
  it('runs git with hooks, fsmonitor and durability off: the repository is thrown away after', async () => {
    const get = (key: string) => withPrivateRepo(async (repo) => (await repo.git(['config', '--get', key])).stdout.toString().trim());
    expect(await get('core.hooksPath')).toBe('/dev/null');
    expect(await get('core.fsmonitor')).toBe('false');
    // fast-import would fsync the pack it writes for arb diff's patch.
    expect(await get('core.fsync')).toBe('none');
  });
});
