// scripts/check-darwin: the macOS native sources compile (syntax only) on Linux, against the real
// Node-API headers and stand-ins for the macOS-only ones; and the check does fail when they don't.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { REPO_ROOT } from '../helpers/env';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'check-darwin');

function check(files: string[] = []) {
  return spawnSync(SCRIPT, files, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
}

describe('scripts/check-darwin', () => {
  it('compiles every native/darwin source, and those shared with macOS, without an error', () => {
    const r = check();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const darwin = fs.readdirSync(path.join(REPO_ROOT, 'native', 'darwin')).filter((f) => f.endsWith('.cc'));
    expect(darwin).toEqual(expect.arrayContaining(['clone_engine.cc', 'clone_tree.cc', 'register.cc', 'sandbox_check.cc']));
    for (const f of darwin) expect(r.stdout).toContain(`ok   native/darwin/${f}`);
    expect(r.stdout).toContain('ok   native/addon.cc');
  });

  describe('fails rather than passing what a Mac would reject', () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-check-darwin-'));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('a source that does not compile', () => {
      const bad = path.join(dir, 'broken.cc');
      fs.writeFileSync(bad, '#include <sys/clonefile.h>\nint f() { return clonefile("a", "b"); }\n');
      const r = check([bad]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`FAIL ${bad}`);
      expect(r.stderr).toMatch(/too few arguments/);
    });

    it('a source that uses a name glibc has and macOS lacks (pipe2, st_mtim)', () => {
      const linuxish = path.join(dir, 'linuxish.cc');
      fs.writeFileSync(
        linuxish,
        '#include <sys/stat.h>\n#include <unistd.h>\n' +
          'int f(int* p) { return pipe2(p, 0); }\n' +
          'long g(const struct stat& st) { return st.st_mtim.tv_sec; }\n',
      );
      const r = check([linuxish]);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('uses what macOS lacks');
      expect(r.stderr).toMatch(/3:.*pipe2/);
      expect(r.stderr).toMatch(/4:.*st_mtim/);
      // It compiles on Linux: only the lint can catch it.
      expect(r.stdout).toContain(`ok   ${linuxish}`);
    });
  });
});
