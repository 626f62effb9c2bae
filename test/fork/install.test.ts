// scripts/install and scripts/uninstall, into a PREFIX of their own.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT } from '../helpers/env';
import { tempDir } from '../helpers/run';
import { rmrf, write } from './fixtures';

const NAMES = ['arb', 'fsfork', 'confine', 'fsdiff'];

function script(name: 'install' | 'uninstall', prefix: string) {
  return spawnSync('bash', [path.join(REPO_ROOT, 'scripts', name)], {
    env: { ...process.env, PREFIX: prefix },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

describe('scripts/install and scripts/uninstall', () => {
  let prefix: string;
  beforeEach(() => {
    prefix = tempDir('arb-prefix-', '/var/tmp');
  });
  afterEach(() => rmrf(prefix));

  it('installs the four names and the man pages into PREFIX, and uninstall removes exactly those', () => {
    // Something of the user's already there, which neither script may touch.
    write(path.join(prefix, 'bin', 'mytool'), '#!/bin/sh\n', 0o755);
    const r = script('install', prefix);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lib = path.join(prefix, 'lib', 'arb');
    for (const n of NAMES) {
      const link = path.join(prefix, 'bin', n);
      expect(fs.readlinkSync(link)).toBe(path.join(lib, 'dist', 'cli.js'));
    }
    const mans = fs.readdirSync(path.join(REPO_ROOT, 'man')).filter((m) => m.endsWith('.1'));
    expect(mans).toEqual(expect.arrayContaining(['arb.1', 'fsfork.1']));
    for (const m of mans) expect(fs.readFileSync(path.join(prefix, 'share/man/man1', m), 'utf8')).toMatch(/^\.TH /m);
    // What runs is the copy, not the checkout.
    expect(fs.lstatSync(path.join(lib, 'build/Release/arb.node')).isFile()).toBe(true);
    expect(fs.existsSync(path.join(lib, 'node_modules/yargs/package.json'))).toBe(true);
    expect(fs.existsSync(path.join(lib, 'node_modules/jest'))).toBe(false);

    const version = spawnSync(path.join(prefix, 'bin', 'arb'), ['--version'], { encoding: 'utf8' });
    expect(version.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version);
    const dir = path.join(prefix, 'proj');
    write(path.join(dir, 'a.txt'), 'a\n');
    const forked = spawnSync(path.join(prefix, 'bin', 'fsfork'), ['--print'], { cwd: dir, encoding: 'utf8' });
    expect(forked.status).toBe(0);
    expect(forked.stdout).toBe(`${dir}.1\n`);
    const man = spawnSync('man', ['-w', 'fsfork'], { env: { ...process.env, MANPATH: path.join(prefix, 'share/man') }, encoding: 'utf8' });
    // man finds it (through the link, so it may name the copy it points to).
    if (man.error === undefined) expect(man.stdout.trim()).toMatch(/\/fsfork\.1$/);

    const u = script('uninstall', prefix);
    expect(u.status).toBe(0);
    expect(fs.readdirSync(path.join(prefix, 'bin'))).toEqual(['mytool']);
    expect(fs.existsSync(path.join(prefix, 'lib'))).toBe(false);
    expect(fs.existsSync(path.join(prefix, 'share'))).toBe(false);
    expect(fs.readdirSync(prefix).sort()).toEqual(['.proj.1.base', 'bin', 'proj', 'proj.1']);
  });

  it('refuses to replace a command of that name that is not arb\'s', () => {
    write(path.join(prefix, 'bin', 'confine'), '#!/bin/sh\necho mine\n', 0o755);
    const r = script('install', prefix);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`scripts/install: '${prefix}/bin/confine' exists and is not arb's`);
    expect(fs.readFileSync(path.join(prefix, 'bin', 'confine'), 'utf8')).toBe('#!/bin/sh\necho mine\n');
    expect(fs.readdirSync(path.join(prefix, 'bin'))).toEqual(['confine']);
  });

  it('installs over an earlier install, and uninstall says when nothing is installed', () => {
    expect(script('install', prefix).status).toBe(0);
    expect(script('install', prefix).status).toBe(0);
    expect(script('uninstall', prefix).status).toBe(0);
    const again = script('uninstall', prefix);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('arb is not installed in');
  });
});
