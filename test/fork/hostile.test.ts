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
