// findProgram: a program arb runs outside is never found where a confined command can write.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { commonlyWritable, findProgram, systemProgram } from '../../src/paths/programs';

let base: string;
const exe = (p: string): string => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, '#!/bin/sh\n', { mode: 0o755 });
  return p;
};
beforeEach(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-programs-')));
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

describe('findProgram', () => {
  it('skips PATH entries in an untrusted directory, names with two dots included, and relative ones', () => {
    const fork = path.join(base, 'fork');
    exe(path.join(fork, 'node_modules', '.bin', 'git'));
    exe(path.join(fork, '..bin', 'git'));
    const good = exe(path.join(base, 'usr', 'bin', 'git'));
    const searchPath = [`${fork}/node_modules/.bin`, `${fork}/..bin`, 'node_modules/.bin', '', path.join(base, 'usr', 'bin')].join(':');
    expect(findProgram('git', searchPath, [fork])).toBe(good);
    expect(findProgram('git', searchPath, [])).toBe(path.join(fork, 'node_modules', '.bin', 'git'));
  });

  it('skips an entry that is a link into an untrusted directory, and a program that links into one', () => {
    const fork = path.join(base, 'fork');
    exe(path.join(fork, 'bin', 'git'));
    fs.mkdirSync(path.join(base, 'a'));
    fs.symlinkSync(path.join(fork, 'bin'), path.join(base, 'a', 'bin'));
    fs.mkdirSync(path.join(base, 'b'));
    fs.symlinkSync(path.join(fork, 'bin', 'git'), path.join(base, 'b', 'git'));
    expect(findProgram('git', `${base}/a/bin:${base}/b`, [fork])).toBeUndefined();
  });

  it('counts the temporary directories and the caches as untrusted', () => {
    expect(commonlyWritable({ TMPDIR: '/t' }, '/home/me')).toEqual(['/tmp', '/var/tmp', '/dev/shm', '/t', '/home/me/.cache', '/home/me/.npm', '/home/me/.cargo', '/home/me/.rustup']);
  });

  it('finds system programs in the system directories only', () => {
    expect(['/usr/bin/ps', '/bin/ps']).toContain(systemProgram('ps'));
  });
});

describe('replaceableByUser (run as the unprivileged test user, whose rights a confined command has at most)', () => {
  const { testEnv, itIf, REPO_ROOT } = require('../helpers/env') as typeof import('../helpers/env');
  const { asUser } = require('../helpers/run') as typeof import('../helpers/run');
  const env = testEnv();
  const user = env.user;
  const test = itIf(Boolean(user && env.userWork), env.userMissing ?? 'no test user');
  const ask = (files: string[]): boolean[] => {
    const script = `const { replaceableByUser } = require(${JSON.stringify(path.join(REPO_ROOT, 'dist', 'paths', 'programs.js'))}); console.log(JSON.stringify(JSON.parse(process.argv[1]).map((f) => replaceableByUser(f))));`;
    const r = asUser(process.execPath, ['-e', script, JSON.stringify(files)]);
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout) as boolean[];
  };

  test('a root-owned checkout in a sticky /var/tmp is not; one the user owns, a link the user made, or a world-writable directory is', () => {
    const sticky = fs.mkdtempSync('/var/tmp/arb-replaceable-');
    try {
      fs.chmodSync(sticky, 0o1777);
      const rootOwned = exe(path.join(sticky, 'checkout', 'build', 'arb-launcher'));
      fs.chmodSync(path.join(sticky, 'checkout'), 0o755);
      const mine = exe(path.join(sticky, 'mine', 'arb-launcher'));
      fs.chownSync(path.join(sticky, 'mine'), user!.uid, user!.gid);
      const link = path.join(sticky, 'link-to-root-owned');
      fs.symlinkSync(rootOwned, link);
      fs.lchownSync(link, user!.uid, user!.gid);
      const open = exe(path.join(sticky, 'open', 'arb-launcher'));
      fs.chmodSync(path.join(sticky, 'open'), 0o777);
      expect(ask([rootOwned, mine, link, open, path.join(sticky, 'missing')])).toEqual([false, true, true, true, true]);
    } finally {
      fs.rmSync(sticky, { recursive: true, force: true });
    }
  });
});
