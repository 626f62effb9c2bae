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
