// The README's install routes, tried as a new user would, from a fresh copy of this checkout (the
// files git has, nothing built, no node_modules) in a directory of its own, each into a
// temporary prefix (never the machine's global one): `npm install -g .`; `scripts/install` with
// PREFIX, then `scripts/uninstall`; `npm pack`, then `npm install -g ./arborinth-*.tgz` with
// npm 11 (the machine's) without running any script, and with npm 10 (the npm of Node 20)
// running them. Each must install arb, fsfork, confine and fsdiff and the four man pages, and
// arb must fork and diff. The dependencies come from the registry (or npm's cache).
//
// Slow (a minute or two: two installs with builds, one pack with prebuilds), so the copies and
// the tarball are made once and shared.
import { spawnSync, SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT, itIf, mustHaveAll } from '../helpers/env';
import { tempDir } from '../helpers/run';

const NAMES = ['arb', 'fsfork', 'confine', 'fsdiff'];
const HOST = `${process.platform}-${process.arch}`;
const CROSS = 'aarch64-linux-gnu-g++';

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d !== '' && fs.existsSync(path.join(d, cmd)));
}

/** The environment of a user's shell: none of the npm_* variables `npm test` sets for jest. */
function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'INIT_CWD') env[k] = v;
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env: userEnv(extra), encoding: 'utf8', timeout: 240_000, maxBuffer: 64 << 20 });
  if (r.status !== 0) {
    // What failed, in the test's output.
    // eslint-disable-next-line no-console
    console.error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

/** A copy of this checkout as a fresh clone has it: the files git has, and nothing built. */
function freshCopy(dest: string): void {
  const files = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'buffer' });
  expect(files.status).toBe(0);
  for (const rel of files.stdout.toString('utf8').split('\0').filter(Boolean)) {
    const from = path.join(REPO_ROOT, rel);
    if (!fs.existsSync(from)) continue; // deleted in the work tree, not yet in git
    fs.mkdirSync(path.dirname(path.join(dest, rel)), { recursive: true });
    fs.cpSync(from, path.join(dest, rel), { verbatimSymlinks: true });
  }
}

/** The bins and man pages are there, and arb forks and diffs (and confine loads, --explain). */
function expectWorkingArb(bin: string, man1: string, work: string, tag: string): void {
  for (const n of NAMES) expect(fs.existsSync(path.join(bin, n))).toBe(true);
  for (const n of NAMES) expect(fs.readFileSync(path.join(man1, `${n}.1`), 'utf8')).toMatch(/^\.TH /m);
  const dir = path.join(work, `proj-${tag}`);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  const fork = spawnSync(path.join(bin, 'arb'), ['fork', '--print', dir], { env: userEnv(), encoding: 'utf8' });
  expect(fork.stderr).toBe('');
  expect(fork.stdout).toBe(`${dir}.1\n`);
  fs.appendFileSync(path.join(dir + '.1', 'a.txt'), 'b\n');
  const diff = spawnSync(path.join(bin, 'fsdiff'), [`${dir}.1`], { env: userEnv(), encoding: 'utf8' });
  expect(diff.stderr).toBe('');
  expect(diff.status).toBe(1);
  expect(diff.stdout).toContain('diff --git a/a.txt b/a.txt');
  expect(diff.stdout).toContain('\n+b\n');
  const confine = spawnSync(path.join(bin, 'confine'), ['--explain', '-d', `${dir}.1`, 'true'], { env: userEnv(), encoding: 'utf8' });
  expect(confine.status).toBe(0);
  // A command really confined: the launcher installed beside the addon applies the sandbox.
  const ran = spawnSync(path.join(bin, 'confine'), ['-d', `${dir}.1`, 'sh', '-c', 'echo confined > made-inside'], { env: userEnv(), encoding: 'utf8' });
  expect(ran.stderr).not.toMatch(/launcher/);
  expect(ran.status).toBe(0);
  expect(fs.readFileSync(path.join(`${dir}.1`, 'made-inside'), 'utf8')).toBe('confined\n');
}

/** `readelf -h`'s class and machine of a file. */
function elf(file: string): string {
  const r = spawnSync('readelf', ['-h', file], { encoding: 'utf8' });
  expect(r.status).toBe(0);
  return r.stdout
    .split('\n')
    .filter((l) => /^\s*(Class|Machine):/.test(l))
    .map((l) => l.trim().replace(/\s+/g, ' '))
    .join('; ');
}

let work: string;
let tarball: string;

beforeAll(() => {
  work = tempDir('arb-routes-', '/var/tmp');
});

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('installing from a fresh clone', () => {
  it('npm install -g . installs the commands and man pages (the folder is built on the way)', () => {
    const clone = path.join(work, 'clone-g');
    freshCopy(clone);
    const prefix = path.join(work, 'global');
    const r = run('npm', ['install', '-g', '.', '--prefix', prefix, '--no-audit', '--no-fund'], clone, { npm_config_prefix: prefix });
    expect(r.status).toBe(0);
    // npm links the folder: what runs is the clone, built by its prepare script from source.
    expect(fs.readlinkSync(path.join(prefix, 'lib', 'node_modules', 'arborinth'))).toBe(path.relative(path.join(prefix, 'lib', 'node_modules'), clone));
    expect(fs.existsSync(path.join(clone, 'build', 'Release', 'arb.node'))).toBe(true);
    expectWorkingArb(path.join(prefix, 'bin'), path.join(prefix, 'share', 'man', 'man1'), work, 'g');
  }, 300_000);

  it('scripts/install builds the clone, installs into PREFIX, and scripts/uninstall removes it; npm pack then packs the prebuilt addons', () => {
    const clone = path.join(work, 'clone-s');
    freshCopy(clone);
    const prefix = path.join(work, 'prefix');
    const r = run('bash', [path.join(clone, 'scripts', 'install')], clone, { PREFIX: prefix });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`scripts/install: ${clone} has no node_modules: running 'npm ci' there first`);
    expectWorkingArb(path.join(prefix, 'bin'), path.join(prefix, 'share', 'man', 'man1'), work, 's');
    expect(run('bash', [path.join(clone, 'scripts', 'uninstall')], clone, { PREFIX: prefix }).status).toBe(0);
    expect(fs.existsSync(prefix)).toBe(false);

    // The clone, built, is packed: prepack makes the prebuilt addons (scripts/prebuild).
    const packs = path.join(work, 'packs');
    fs.mkdirSync(packs);
    const p = run('npm', ['pack', '--pack-destination', packs], clone);
    expect(p.status).toBe(0);
    const made = fs.readdirSync(packs);
    expect(made).toEqual([expect.stringMatching(/^arborinth-.*\.tgz$/)]);
    tarball = path.join(packs, made[0]);
  }, 300_000);
});

describe('the packed tarball', () => {
  const needTarball = () => {
    if (!tarball) throw new Error('no tarball: the npm pack test above failed');
  };

  it(`carries prebuilt addons (${HOST}, and linux-arm64 where ${CROSS} is), never a build of the packer's`, () => {
    needTarball();
    const list = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    expect(list).toContain(`package/prebuilds/${HOST}/arb.glibc.node`);
    expect(list).toContain(`package/prebuilds/${HOST}/arb-launcher`);
    expect(list.filter((f) => f.startsWith('package/build/') || f.startsWith('package/src/') || f.startsWith('package/test/'))).toEqual([]);
    expect(list).toEqual(expect.arrayContaining(['package/dist/cli.js', 'package/scripts/install-addon.js', 'package/CMakeLists.txt', 'package/man/arb.1']));
    const unpacked = path.join(work, 'unpacked');
    fs.mkdirSync(unpacked);
    expect(spawnSync('tar', ['xzf', tarball, '-C', unpacked]).status).toBe(0);
    expect(elf(path.join(unpacked, 'package', 'prebuilds', HOST, 'arb.glibc.node'))).toEqual(
      HOST === 'linux-x64' ? 'Class: ELF64; Machine: Advanced Micro Devices X86-64' : expect.stringContaining('Class: ELF64'),
    );
    if (HOST !== 'linux-x64') return;
    const arm = path.join(unpacked, 'package', 'prebuilds', 'linux-arm64', 'arb.glibc.node');
    if (!onPath(CROSS)) {
      if (mustHaveAll()) throw new Error(`required test environment missing: ${CROSS} (apt-get install g++-aarch64-linux-gnu)`);
      // eslint-disable-next-line no-console
      console.warn(`skipped the linux-arm64 prebuild check: no ${CROSS}`);
      expect(fs.existsSync(arm)).toBe(false);
      return;
    }
    expect(elf(arm)).toBe('Class: ELF64; Machine: AArch64');
    expect(elf(path.join(path.dirname(arm), 'arb-launcher'))).toBe('Class: ELF64; Machine: AArch64');
  });

  itIf(HOST === 'linux-x64' || HOST === 'linux-arm64', `no prebuilt addon is made for ${HOST}`)(
    'installs with npm 11 running no script at all: the prebuilt addon is used',
    () => {
      needTarball();
      const prefix = path.join(work, 'npm11');
      const r = run('npm', ['install', '-g', tarball, '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund'], work, { npm_config_prefix: prefix });
      expect(r.status).toBe(0);
      const pkg = path.join(prefix, 'lib', 'node_modules', 'arborinth');
      expect(fs.existsSync(path.join(pkg, 'build'))).toBe(false);
      expectWorkingArb(path.join(prefix, 'bin'), path.join(prefix, 'share', 'man', 'man1'), work, 'n11');
    },
    120_000,
  );

  itIf(HOST === 'linux-x64' || HOST === 'linux-arm64', `no prebuilt addon is made for ${HOST}`)(
    'installs with npm 10 running its install script, which builds nothing when the prebuilt addon loads',
    () => {
      needTarball();
      const npm10 = path.join(work, 'npm10');
      expect(run('npm', ['install', '-g', 'npm@10', '--prefix', npm10, '--no-audit', '--no-fund'], work, { npm_config_prefix: npm10 }).status).toBe(0);
      const npm = path.join(npm10, 'bin', 'npm');
      expect(run(npm, ['--version'], work).stdout).toMatch(/^10\./);
      const prefix = path.join(work, 'npm10-global');
      const r = run(npm, ['install', '-g', tarball, '--prefix', prefix, '--foreground-scripts', '--no-audit', '--no-fund'], work, { npm_config_prefix: prefix });
      expect(r.status).toBe(0);
      expect(r.stdout + r.stderr).toContain(`arb: using the prebuilt native addon prebuilds/${HOST}/arb.glibc.node: nothing to build`);
      const pkg = path.join(prefix, 'lib', 'node_modules', 'arborinth');
      expect(fs.existsSync(path.join(pkg, 'build'))).toBe(false);
      expectWorkingArb(path.join(prefix, 'bin'), path.join(prefix, 'share', 'man', 'man1'), work, 'n10');
    },
    120_000,
  );
});

describe('the addon loader', () => {
  it('names the platform, every path tried and how to build when no addon loads', () => {
    // A package with dist/ and a prebuilt addon for another platform only.
    const pkg = path.join(work, 'no-addon');
    fs.cpSync(path.join(REPO_ROOT, 'dist'), path.join(pkg, 'dist'), { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(pkg, 'package.json'));
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(pkg, 'node_modules'));
    const other = HOST === 'linux-arm64' ? 'linux-x64' : 'linux-arm64';
    fs.mkdirSync(path.join(pkg, 'prebuilds', other), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'prebuilds', other, 'arb.glibc.node'), '');
    const dir = path.join(work, 'proj-none');
    fs.mkdirSync(dir);
    const r = spawnSync(process.execPath, [path.join(pkg, 'dist', 'cli.js'), 'fork', '--print', dir], { env: userEnv({ ARB_ADDON: '' }), encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot load arb's native addon for ${HOST} (Node ${process.version}); tried:`);
    for (const p of ['build/Release/arb.node', 'build/Debug/arb.node', `prebuilds/${HOST}/arb.glibc.node`]) {
      expect(r.stderr).toContain(`  ${path.join(pkg, p)}: not there\n`);
    }
    expect(r.stderr).toContain(`this package has prebuilt addons for ${other} only; build it from source (needs cmake and a C++17 compiler): cd ${pkg} && npm run build:native`);
    expect(fs.existsSync(`${dir}.1`)).toBe(false);
  });

  it('the install script, with no prebuilt addon for the platform and no compiler, says what it needs', () => {
    const pkg = path.join(work, 'no-compiler');
    fs.mkdirSync(path.join(pkg, 'scripts'), { recursive: true });
    for (const f of ['package.json', 'CMakeLists.txt', 'scripts/install-addon.js']) fs.copyFileSync(path.join(REPO_ROOT, f), path.join(pkg, f));
    fs.cpSync(path.join(REPO_ROOT, 'native'), path.join(pkg, 'native'), { recursive: true });
    fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(pkg, 'node_modules'));
    fs.mkdirSync(path.join(pkg, 'prebuilds', 'darwin-arm64'), { recursive: true });
    // A PATH with node and nothing else: no cmake, no compiler.
    const bin = path.join(work, 'only-node');
    fs.mkdirSync(bin);
    fs.symlinkSync(process.execPath, path.join(bin, 'node'));
    const r = spawnSync(process.execPath, [path.join(pkg, 'scripts', 'install-addon.js')], { cwd: pkg, env: userEnv({ PATH: bin }), encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`arb: building the native addon for ${HOST} from source`);
    expect(r.stderr).toContain(
      `arb: could not build the native addon for ${HOST} from source (cmake-js compile exited 1, above). It needs cmake 3.15 or later and a C++17 compiler`,
    );
    expect(r.stderr).toContain(`then run \`npm run build:native\` in ${pkg}. Prebuilt addons in this package: darwin-arm64.`);
    expect(fs.existsSync(path.join(pkg, 'build', 'Release', 'arb.node'))).toBe(false);
  });
});
