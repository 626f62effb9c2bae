// spawnConfined: a program started under a Landlock ruleset, with the streams and the working
// directory given as descriptors. Run as root here: Landlock confines root too.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { spawnConfined } from '../../src/confine/confined-process';
import { buildRuleset } from '../../src/confine/landlock';
import type { Grant } from '../../src/confine/policy';
import { landlockAbi } from '../../src/native';

let base: string;
beforeEach(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-confined-')));
  fs.mkdirSync(path.join(base, 'work'));
  fs.mkdirSync(path.join(base, 'secret'));
  fs.writeFileSync(path.join(base, 'secret', 'key'), 'KEY\n');
  fs.writeFileSync(path.join(base, 'work', 'file'), 'WORK\n');
});
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

/** Runs sh -c SCRIPT confined to reading / but `secret`, writing `work`; its output in a file. */
async function run(script: string, cwd: string, beforeStart?: () => void): Promise<{ status: number | null; out: string }> {
  const grants: Grant[] = [
    { path: '/', access: 'list', isDirectory: true, why: '' },
    ...fs.readdirSync('/').filter((n) => n !== 'tmp').map((n) => ({ path: `/${n}`, access: 'read' as const, isDirectory: true, why: '' })),
    { path: path.join(base, 'work'), access: 'write', isDirectory: true, why: '' },
  ];
  const outFile = path.join(base, 'out');
  const out = fs.openSync(outFile, 'w');
  const dir = fs.openSync(cwd, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  beforeStart?.();
  try {
    const p = spawnConfined({ file: '/bin/sh', argv: ['sh', '-c', script], env: { PATH: '/usr/bin:/bin' }, cwdFd: dir, stdio: [0, out, out], ruleset: buildRuleset(grants, landlockAbi()) });
    const ended = await p.exited;
    return { status: ended.status, out: fs.readFileSync(outFile, 'utf8') };
  } finally {
    fs.closeSync(out);
    fs.closeSync(dir);
  }
}

describe('spawnConfined', () => {
  it('reads and writes what is granted, and nothing else (EACCES)', async () => {
    const r = await run(`cat file; echo made > new && echo wrote; cat ${base}/secret/key || echo denied-read; echo x > ${base}/out2 || echo denied-write`, path.join(base, 'work'));
    expect(r.status).toBe(0);
    expect(r.out).toContain('WORK');
    expect(r.out).toContain('wrote');
    expect(r.out).not.toContain('KEY');
    expect(r.out).toMatch(/Permission denied\ndenied-read/);
    expect(r.out).toContain('denied-write');
    expect(fs.existsSync(path.join(base, 'out2'))).toBe(false);
  });

  it('runs in the directory that was opened, even when its name now leads elsewhere', async () => {
    const work = path.join(base, 'work');
    const r = await run('pwd -P; ls', work, () => {
      fs.renameSync(work, `${work}.moved`);
      fs.symlinkSync(path.join(base, 'secret'), work);
    });
    expect(r.out).toContain(`${work}.moved`);
    expect(r.out).toContain('file');
    expect(r.out).not.toContain('key');
  });

  it('exits with the status of the program, and 127 for one that is not there', async () => {
    expect((await run('exit 7', base)).status).toBe(7);
    const out = fs.openSync(path.join(base, 'o'), 'w');
    const dir = fs.openSync(base, fs.constants.O_RDONLY);
    try {
      const p = spawnConfined({ file: '/nonexistent', argv: ['x'], env: {}, cwdFd: dir, stdio: [0, out, out], ruleset: buildRuleset([], landlockAbi()) });
      expect((await p.exited).status).toBe(127);
      expect(fs.readFileSync(path.join(base, 'o'), 'utf8')).toMatch(/cannot run \/nonexistent confined/);
    } finally {
      fs.closeSync(out);
      fs.closeSync(dir);
    }
  });
});
