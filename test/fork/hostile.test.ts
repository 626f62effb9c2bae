// arb fork -l and --prune among forks a hostile command made: the forks of a directory inside a
// fork are named by the command that ran in that fork.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { arb, tempDir } from '../helpers/run';

let work: string;
beforeEach(() => {
  work = tempDir('arb-fork-hostile-');
});
afterEach(() => {
  fs.rmSync(work, { recursive: true, force: true });
});

describe('fork names that hold C1 controls or bidi overrides', () => {
  it('are shown escaped by arb fork -l', () => {
    const dir = path.join(work, 'app');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    // U+009B is CSI to a terminal that takes C1 controls; U+202E turns the rest around.
    const name = 'x\u009b2J\u202eevil';
    fs.cpSync(dir, path.join(work, `app.${name}`), { recursive: true });
    fs.cpSync(dir, path.join(work, `.app.${name}.base`), { recursive: true });
    const r = arb(['fork', '-l'], { cwd: dir });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('../app.x\\x9b2J\\u{202e}evil');
    expect(r.stdout).not.toMatch(/[\u0080-\u009f\u202e]/);
  });
});

describe('a fork made where a process left running can write', () => {
  it('sets modes and times through descriptors: a directory swapped for a link mid-clone changes nothing outside', () => {
    // The new base is inside a directory the swapper can write (as when forking a subdirectory
    // of a fork, with a process the confined command left running). The swapper exchanges each
    // directory the clone makes in the base with a link to a private directory outside; a chmod
    // or utime by path would follow the link and give that directory the source's mode 0777.
    const proj = path.join(work, 'proj');
    for (let i = 0; i < 40; i++) {
      const d = path.join(proj, `v${i}`);
      fs.mkdirSync(d, { recursive: true });
      for (let j = 0; j < 50; j++) fs.writeFileSync(path.join(d, `f${j}`), `${j}\n`);
      fs.chmodSync(d, 0o777);
    }
    const secret = path.join(work, 'secret');
    fs.mkdirSync(secret, { mode: 0o700 });
    fs.chmodSync(secret, 0o700);
    const before = fs.statSync(secret);
    const swapper = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
base, target, stop = sys.argv[1], sys.argv[2], time.time() + float(sys.argv[3])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
while time.time() < stop:
    try:
        names = os.listdir(base)
    except OSError:
        continue
    for n in names:
        if n.startswith('v') and not n.endswith('x'):
            p, q = os.path.join(base, n), os.path.join(base, n + 'x')
            try:
                os.symlink(target, q)
            except OSError:
                pass
            libc.renameat2(AT_FDCWD, p.encode(), AT_FDCWD, q.encode(), RENAME_EXCHANGE)
`;
    for (let round = 0; round < 6; round++) {
      const base = path.join(work, `.proj.${round + 1}.base`);
      const child = require('node:child_process').spawn('python3', ['-c', swapper, base, secret, '3'], { stdio: 'ignore' });
      arb(['fork', '--print', '--no-ignore', proj]);
      child.kill('SIGKILL');
      const after = fs.statSync(secret);
      expect((after.mode & 0o7777).toString(8)).toBe((before.mode & 0o7777).toString(8));
      expect(after.mtimeMs).toBe(before.mtimeMs);
    }
  });
});
