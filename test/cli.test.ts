// The executable as a whole: names, help, version, usage errors.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT } from './helpers/env';
import { asksForHelp } from '../src/cli';
import { arb } from './helpers/run';

const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };

describe('arb', () => {
  it('prints its version', () => {
    const r = arb(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('lists its commands in --help', () => {
    const r = arb(['--help']);
    expect(r.status).toBe(0);
    for (const cmd of ['fork', 'confine', 'diff', 'completion']) expect(r.stdout).toContain(`arb ${cmd}`);
  });

  it('names the four executables in package.json bin, all the same file', () => {
    expect(Object.keys(pkg.bin).sort()).toEqual(['arb', 'confine', 'fsdiff', 'fsfork']);
    expect(new Set(Object.values(pkg.bin)).size).toBe(1);
  });

  it('answers a typo with usage and exit 2', () => {
    const r = arb(['forkk']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('Usage');
    expect(r.stdout).toBe('');
  });

  it('answers an unknown option with usage and exit 2', () => {
    const r = arb(['fork', '--bogus-option']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/arb fork: Unknown arguments?: bogus-option/);
  });

  it('asks for a command when given none', () => {
    const r = arb([]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/name a command/);
  });

  it('prints a shell completion script', () => {
    const r = arb(['completion']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/complete -o/);
  });

  it('dispatches on the name it is called by', () => {
    const r = arb(['--help'], {}, 'fsfork');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^fsfork /);
    const d = arb(['--help'], {}, 'fsdiff');
    expect(d.stdout).toMatch(/^fsdiff /);
  });

  it('reads arb CMD as its alias: the same help but for the name', () => {
    for (const [cmd, alias] of [
      ['fork', 'fsfork'],
      ['confine', 'confine'],
      ['diff', 'fsdiff'],
    ]) {
      const a = arb([cmd, '--help']);
      const b = arb(['--help'], {}, alias);
      expect(a.status).toBe(0);
      expect(a.stdout.startsWith(`arb ${cmd} `)).toBe(true);
      expect(`${alias}${a.stdout.slice(`arb ${cmd}`.length)}`).toBe(b.stdout);
    }
  });
});

describe('asksForHelp', () => {
  it.each([
    [['--help'], true],
    [['-h'], true],
    [['-vh'], true],
    [['--help=true'], true],
    [['-d', 'dir', '-h'], true],
    [['-d', 'h'], false],
    [['--', '-h'], false],
    [['--hidden'], false],
    [[], false],
  ])('%j -> %s', (argv, expected) => {
    expect(asksForHelp(argv)).toBe(expected);
  });
});
