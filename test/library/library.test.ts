// The library as a user of the package sees it: a small TypeScript program, compiled with tsc
// against the built package (its package.json `types`, dist/index.d.ts) and run with node
// (`main`, dist/index.js), imports `arborinth` from node_modules. The package is linked there as
// `npm install /path/to/arborinth` links a folder (node_modules/arborinth -> the checkout), which
// needs no registry and reuses the checkout's own node_modules; npm pack checks that the
// published files hold the same entry points.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT, itIf, testEnv } from '../helpers/env';
import { asUser } from '../helpers/run';
import { removeUserArea, userDir, userFile } from '../confine/confine-helpers';

const env = testEnv();
const asUserTest = itIf(Boolean(env.user && env.userWork), env.userMissing ?? 'no test user');

const PROGRAM = `
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ArbError, MAX_NAME_BYTES, confine, diff, fork, listForks, prune, validateForkName } from 'arborinth';
import type { DiffResult, ForkEntry, ForkResult, PruneResult } from 'arborinth';

// Never called: each line must fail to compile, which shows the package's types are real.
async function typeChecks(): Promise<void> {
  // @ts-expect-error dir is a path
  await fork({ dir: 42 });
  // @ts-expect-error the patch is a Buffer
  const s: string = (await diff('/x')).patch;
  // @ts-expect-error no such jail
  await confine({ command: 'true', jail: 'docker' });
  // @ts-expect-error confine resolves with a number
  const t: string = await confine({ command: 'true' });
  // @ts-expect-error a fork has no .stats.nope
  (await fork()).stats.nope;
  void s;
  void t;
}
void typeChecks;

async function code(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
    return 'resolved';
  } catch (e) {
    return e instanceof ArbError ? e.code : 'not an ArbError: ' + String(e);
  }
}

async function api(dir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const made: ForkResult = await fork({ dir, name: 'lib', warn: () => undefined });
  out.made = { source: made.source, fork: made.fork, base: made.base, files: made.stats.files };
  const before: DiffResult = await diff(made.fork);
  out.before = { changed: before.changed, bytes: before.patch.length };
  fs.writeFileSync(path.join(made.fork, 'a.txt'), 'changed\\n');
  fs.writeFileSync(path.join(made.fork, 'new.txt'), 'new\\n');
  const after = await diff(made.fork);
  out.after = { changed: after.changed, patch: after.patch.toString('utf8') };
  out.twoDirs = (await diff(dir, made.fork)).changed;
  const second = await fork({ dir });
  out.second = path.basename(second.fork);
  const list: ForkEntry[] = await listForks(dir);
  out.list = list.map((e) => ({ name: e.name, status: e.status, count: e.count }));
  const pruned: PruneResult = await prune(dir, { dryRun: true });
  out.pruned = { removed: pruned.removed, kept: pruned.kept.map((k) => k.entry.name + ':' + k.reason) };
  // Left alone for two hours, the unchanged fork and its base go; the changed one stays.
  const old = new Date(Date.now() - 2 * 3600 * 1000);
  const age = (p: string): void => {
    for (const e of fs.readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) age(path.join(p, e.name)); else fs.utimesSync(path.join(p, e.name), old, old);
    fs.utimesSync(p, old, old);
  };
  age(second.fork);
  age(second.base);
  const removed: string[] = [];
  const really = await prune(dir, { onRemove: (p) => removed.push(p) });
  out.prunedForReal = { removed: really.removed, reported: removed, kept: really.kept.map((k) => k.entry.name + ':' + k.reason) };
  // One rule for names, everywhere: refused with ARB_BAD_NAME, nothing made.
  const names: Record<string, string> = {};
  for (const name of ['', '.', '..', '.hidden', 'a/b', '../up', 'nul\\u0000x', 'tab\\tx', 'bell\\u0007', 'del\\u007f', 'x'.repeat(MAX_NAME_BYTES + 1), 'é'.repeat(101)]) {
    names[JSON.stringify(name).slice(0, 20)] = await code(() => fork({ dir, name }));
  }
  names.longest = await code(() => fork({ dir, name: 'y'.repeat(MAX_NAME_BYTES), warn: () => undefined }));
  names.validate = await code(async () => validateForkName('a/b'));
  out.names = names;
  out.errors = {
    missingDir: await code(() => fork({ dir: path.join(dir, 'nope') })),
    noBase: await code(() => diff(dir)),
    missingFork: await code(() => diff(path.join(dir, 'nope'))),
    noCommand: await code(() => confine({ command: 'no-such-command-arb', dir })),
    badMount: await code(() => confine({ command: 'true', dir, jail: 'bwrap', mounts: ['bind:/x'] })),
    badPreset: await code(() => confine({ command: 'true', dir, preset: 'nope' })),
  };
  out.siblings = fs.readdirSync(path.dirname(dir)).sort();
  return out;
}

async function main(): Promise<void> {
  const [mode, dir, jail] = process.argv.slice(2);
  if (mode === 'api') {
    console.log(JSON.stringify(await api(dir)));
  } else if (mode === 'confine') {
    const status: number = await confine({
      command: 'sh',
      args: ['-c', 'echo "inside: $(pwd) $CLAUDE_CODE_SANDBOXED"; cat ~/.ssh/id_ed25519 2>/dev/null || echo "no key"; exit 7'],
      dir,
      jail: jail as 'landlock' | 'bwrap',
    });
    console.log('after confine: ' + status);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(99);
});
`;

let project: string;

beforeAll(() => {
  project = fs.mkdtempSync('/tmp/arb-library-');
  fs.chmodSync(project, 0o755);
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(modules, '@types'), { recursive: true });
  fs.symlinkSync(REPO_ROOT, path.join(modules, 'arborinth'));
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules', '@types', 'node'), path.join(modules, '@types', 'node'));
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'uses-arborinth', private: true, dependencies: { arborinth: 'file:../arborinth' } }));
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'commonjs', moduleResolution: 'node', strict: true, types: ['node'], outDir: 'out' }, files: ['main.ts'] }),
  );
  fs.writeFileSync(path.join(project, 'main.ts'), PROGRAM);
});

afterAll(() => {
  fs.rmSync(project, { recursive: true, force: true });
  removeUserArea();
});

describe('the arborinth package', () => {
  it("points main and types at built files, and ships them (npm pack)", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; main: string; types: string };
    expect(pkg).toMatchObject({ name: 'arborinth', main: 'dist/index.js', types: 'dist/index.d.ts' });
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--offline'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const files = (JSON.parse(r.stdout) as { files: { path: string }[] }[])[0].files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/cli.js', 'scripts/install-addon.js', 'package.json']));
    // The addon comes as prebuilds/ (scripts/prebuild, at npm pack) or is built at install, never the packer's own build.
    expect(files.filter((f) => f.startsWith('build/'))).toEqual([]);
  });

  it('compiles a TypeScript program against its types (and rejects misuses of them)', () => {
    const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(fs.existsSync(path.join(project, 'out', 'main.js'))).toBe(true);
  });

  it('forks, diffs, lists and prunes from code; errors are ArbError with a code', () => {
    const parent = fs.mkdtempSync('/tmp/arb-library-work-');
    try {
      const dir = path.join(parent, 'proj');
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
      const r = spawnSync(process.execPath, [path.join(project, 'out', 'main.js'), 'api', dir], { encoding: 'utf8', cwd: project });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.made).toEqual({ source: dir, fork: `${dir}.lib`, base: path.join(parent, '.proj.lib.base'), files: 1 });
      expect(out.before).toEqual({ changed: false, bytes: 0 });
      expect(out.after.changed).toBe(true);
      expect(out.after.patch).toContain('diff --git a/a.txt b/a.txt');
      expect(out.after.patch).toContain('+changed');
      expect(out.after.patch).toContain('diff --git a/new.txt b/new.txt');
      expect(out.twoDirs).toBe(true);
      expect(out.second).toBe('proj.1');
      expect(out.list).toEqual(
        expect.arrayContaining([
          { name: 'lib', status: 'only-here', count: 2 },
          { name: '1', status: 'unchanged', count: 0 },
        ]),
      );
      // Both were changed just now: pruning keeps them.
      expect(out.pruned.removed).toEqual([]);
      expect(out.pruned.kept.sort()).toEqual(['1:recent', 'lib:only-here']);
      // Once the unchanged one has been left alone for an hour, it goes with its base.
      expect(out.prunedForReal).toEqual({
        removed: [`${dir}.1`, path.join(parent, '.proj.1.base')],
        reported: [`${dir}.1`, path.join(parent, '.proj.1.base')],
        kept: ['lib:only-here'],
      });
      for (const [name, code] of Object.entries(out.names)) {
        if (name === 'longest') expect(code).toBe('resolved');
        else expect({ name, code }).toEqual({ name, code: 'ARB_BAD_NAME' });
      }
      expect(out.errors).toEqual({
        missingDir: 'ARB_NOT_FOUND',
        noBase: 'ARB_NO_BASE',
        missingFork: expect.stringMatching(/^ARB_/),
        noCommand: 'ARB_COMMAND_NOT_FOUND',
        badMount: 'ARB_USAGE',
        badPreset: 'ARB_USAGE',
      });
      // Refused names made nothing: only the forks asked for, and their bases.
      expect(out.siblings).toEqual(['.proj.lib.base', `.proj.${'y'.repeat(200)}.base`, 'proj', 'proj.lib', `proj.${'y'.repeat(200)}`].sort());
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });

  for (const [jail, extraEnv] of [
    ['bwrap', {}],
    // Landlock alone would become the command (execve) on the command line; called as a library
    // it must wait, so that the caller carries on.
    ['landlock', { ARB_CONFINE_NO_NAMESPACES: '1' }],
  ] as const) {
    asUserTest(`confine() runs the command jailed (${jail}), waits, and resolves with its status`, () => {
      const dir = userDir(`lib-${jail}`);
      userFile(path.join(dir, 'x'), 'x\n');
      const r = asUser(process.execPath, [path.join(project, 'out', 'main.js'), 'confine', dir, jail], { env: extraEnv });
      expect(r.stdout).toBe(`inside: ${dir} 1\nno key\nafter confine: 7\n`);
      expect(r.status).toBe(0);
    });
  }
});
