// A developer's day in a fork, under arb confine --no-network, as the unprivileged test user who
// has never run npm or pip (no ~/.npm, no ~/.cache) and whose $TMPDIR lies under /tmp
// (pam_tmpdir's /tmp/user/UID): npm install (a local tarball, --offline), a Python venv with pip
// (a local wheel, --no-index), make, git commit; then the fork's patch applies in the original.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, itIf, testEnv } from '../helpers/env';
import { arbAsUser, asUser } from '../helpers/run';
import { removeUserArea, userDir, userFile } from '../confine/confine-helpers';

const env = testEnv();
const user = env.user;
const test = itIf(Boolean(user && env.userWork), env.userMissing ?? 'no test user');

let deps = '';
let tmpdir = '';

beforeAll(() => {
  if (!user) return;
  // What the project installs, made outside the home and /tmp, readable by everyone.
  deps = `/var/lib/${user.name}-devday`;
  fs.rmSync(deps, { recursive: true, force: true });
  const pkg = path.join(deps, 'leftpad-local');
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'leftpad-local', version: '1.0.0', main: 'index.js', license: 'MIT' }));
  fs.writeFileSync(path.join(pkg, 'index.js'), "module.exports = (s, n) => String(s).padStart(n, '.');\n");
  execFileSync('npm', ['pack', '--silent', '--pack-destination', deps], { cwd: pkg, stdio: ['ignore', 'ignore', 'pipe'] });
  // A pure-Python wheel, as pip takes it: a zip with the module and its dist-info.
  const wheel = path.join(deps, 'hello_arb-1.0-py3-none-any.whl');
  execFileSync('python3', [
    '-c',
    [
      'import sys, zipfile',
      'files = {',
      '  "hello_arb/__init__.py": "def hello():\\n    return \\"hello from a wheel\\"\\n",',
      '  "hello_arb-1.0.dist-info/METADATA": "Metadata-Version: 2.1\\nName: hello_arb\\nVersion: 1.0\\n",',
      '  "hello_arb-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: arb-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",',
      '}',
      'with zipfile.ZipFile(sys.argv[1], "w") as z:',
      '    for n, c in files.items(): z.writestr(n, c)',
      '    z.writestr("hello_arb-1.0.dist-info/RECORD", "".join(n + ",,\\n" for n in files) + "hello_arb-1.0.dist-info/RECORD,,\\n")',
    ].join('\n'),
    wheel,
  ]);
  execFileSync('chmod', ['-R', 'a+rX', deps]);
  // A new user: no npm or pip cache yet.
  for (const d of ['.npm', '.cache']) fs.rmSync(path.join(user.home, d), { recursive: true, force: true });
  // pam_tmpdir's $TMPDIR.
  tmpdir = `/tmp/user/${user.uid}`;
  fs.mkdirSync('/tmp/user', { recursive: true, mode: 0o711 });
  fs.rmSync(tmpdir, { recursive: true, force: true });
  fs.mkdirSync(tmpdir, { mode: 0o700 });
  fs.chownSync(tmpdir, user.uid, user.gid);
});

afterAll(() => {
  removeUserArea();
  if (deps) fs.rmSync(deps, { recursive: true, force: true });
  if (tmpdir) fs.rmSync(tmpdir, { recursive: true, force: true });
});

describe("a developer's day in a fork", () => {
  test('npm install, a venv with pip, make and git commit work confined with no network; the patch applies', () => {
    const dir = userDir('devday');
    userFile(path.join(dir, '.gitignore'), 'node_modules/\n.venv/\n');
    userFile(path.join(dir, 'package.json'), `${JSON.stringify({ name: 'day', version: '1.0.0', private: true, dependencies: { 'leftpad-local': `file:${deps}/leftpad-local-1.0.0.tgz` } }, null, 2)}\n`);
    userFile(path.join(dir, 'Makefile'), 'hello.txt: package.json\n\tnode -e "console.log(require(\'leftpad-local\')(\'made\', 6))" > hello.txt\n');
    const init = asUser('sh', ['-c', 'git init -q && git add -A && git commit -qm init'], { cwd: dir });
    expect(init.status).toBe(0);

    const script = [
      'set -e',
      'printf "pwd=%s oldpwd=%s\\n" "$PWD" "${OLDPWD-unset}"',
      'test -d "$TMPDIR" && echo t > "$TMPDIR/t" && echo tmpdir-ok',
      'npm install --offline --no-audit --no-fund --silent',
      'node -e "console.log(require(\'leftpad-local\')(\'npm\', 5))"',
      'python3 -m venv .venv',
      `.venv/bin/pip install --quiet --no-index --find-links ${deps} hello_arb`,
      '.venv/bin/python -c "import hello_arb; print(hello_arb.hello())"',
      'make -s --no-print-directory',
      'git add -A && git commit -qm "a day in a fork" && git log --format=%s -1',
    ].join('\n');
    const r = arbAsUser(['confine', '--no-network', '-n', 'day', '--', 'sh', '-c', script], {
      cwd: dir,
      env: { PWD: dir, OLDPWD: `${user!.home}/secret-place`, TMPDIR: tmpdir, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
      timeout: 240_000,
    });
    const fork = `${dir}.day`;
    if (r.status !== 0) throw new Error(`the day failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
    expect(r.stdout.split('\n')).toEqual([`pwd=${fork} oldpwd=unset`, 'tmpdir-ok', '..npm', 'hello from a wheel', 'a day in a fork', '']);
    expect(fs.readFileSync(path.join(fork, 'hello.txt'), 'utf8')).toBe('..made\n');
    // The caches a new user lacked were made, private, and npm and pip used them.
    for (const d of ['.npm', '.cache']) expect(fs.statSync(path.join(user!.home, d)).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(path.join(user!.home, '.npm', '_cacache'))).toBe(true);

    // The fork's patch (not .git, not what .gitignore leaves out) applies in the original.
    const applied = asUser('sh', ['-c', `node '${CLI}' diff '${fork}' > ../day-${process.pid}.patch; git apply ../day-${process.pid}.patch && cat hello.txt && test -f package-lock.json && test ! -e node_modules && echo applied`], { cwd: dir });
    expect({ status: applied.status, stdout: applied.stdout, stderr: applied.stderr }).toEqual({ status: 0, stdout: '..made\napplied\n', stderr: '' });
  }, 300_000);

  test.each([['landlock'], ['bwrap']])('a $TMPDIR under /tmp (pam_tmpdir) exists inside the %s jail, empty and private', (jail) => {
    fs.writeFileSync(path.join(tmpdir, 'host-file'), 'x');
    fs.chownSync(path.join(tmpdir, 'host-file'), user!.uid, user!.gid);
    try {
      const dir = userDir(`tmpdir-${jail}`);
      const script = 'test -d "$TMPDIR" && ls -A "$TMPDIR" && echo t > "$TMPDIR/inside" && echo "made $(cat "$TMPDIR/inside")"';
      const r = arbAsUser(['confine', '--jail', jail, '-d', dir, '--', 'sh', '-c', script], { cwd: dir, env: { TMPDIR: tmpdir }, timeout: 60_000 });
      expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 0, stdout: 'made t\n' });
      // What it made there went with it; the host's file stayed, unseen.
      expect(fs.readdirSync(tmpdir)).toEqual(['host-file']);
    } finally {
      fs.rmSync(path.join(tmpdir, 'host-file'), { force: true });
    }
  }, 120_000);

  test("a new user's caches are made (0700) and granted, and what runs later from them stays read-only", () => {
    // A home with no cache at all: ~/.npm, ~/.cache, ~/.cargo and ~/.rustup are made before
    // they are granted (a jail grants only what exists), and the caches table's directories
    // (~/.cargo/bin, ~/.npm/_npx, ~/.rustup/toolchains) are made in them and kept read-only.
    const fresh = `/var/lib/${user!.name}-newhome`;
    fs.rmSync(fresh, { recursive: true, force: true });
    fs.mkdirSync(fresh, { mode: 0o700 });
    fs.chownSync(fresh, user!.uid, user!.gid);
    try {
      const dir = userDir('newuser');
      const script = [
        'for p in .npm/_cacache/x .cache/x .cargo/registry/x .npm/_npx/x .cargo/bin/x .rustup/toolchains/x; do',
        '  mkdir -p "$(dirname "$HOME/$p")" 2>/dev/null; if ( : > "$HOME/$p" ) 2>/dev/null; then echo "$p written"; else echo "$p refused"; fi',
        'done',
      ].join('\n');
      const r = arbAsUser(['confine', '-d', dir, '--', 'sh', '-c', script], { cwd: dir, env: { HOME: fresh }, timeout: 60_000 });
      expect({ status: r.status, stdout: r.stdout }).toEqual({
        status: 0,
        stdout: ['.npm/_cacache/x written', '.cache/x written', '.cargo/registry/x written', '.npm/_npx/x refused', '.cargo/bin/x refused', '.rustup/toolchains/x refused', ''].join('\n'),
      });
      for (const d of ['.npm', '.cache', '.cargo', '.rustup']) expect(fs.statSync(path.join(fresh, d)).mode & 0o777).toBe(0o700);
      for (const d of ['.npm/_npx', '.cargo/bin', '.rustup/toolchains']) expect(fs.readdirSync(path.join(fresh, d))).toEqual([]);
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  }, 120_000);
});
