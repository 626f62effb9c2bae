// Fork names: the one rule for NAME, where bases go, finding forks, reserving names.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { ArbError } from '../../src/errors';
import { baseOf, findForks, forkPathsOf, reserveNextFork, reservePaths, validateForkName } from '../../src/fork/names';
import { tempDir } from '../helpers/run';
import { rmrf } from './fixtures';

describe('validateForkName', () => {
  it.each(['1', 'swebench', 'try-2', 'a.b', 'Ünïcødé', 'x'.repeat(200), 'with space'])('accepts %j', (name) => {
    expect(() => validateForkName(name)).not.toThrow();
  });

  it.each([
    ['', /empty/],
    ['.', /names a directory/],
    ['..', /names a directory/],
    ['.hidden', /starts with a dot/],
    ['a/b', /contains a \//],
    ['../x', /contains a \//],
    ['nul\0x', /NUL/],
    ['line\nbreak', /control character/],
    ['esc\x1b[31m', /control character/],
    ['del\x7f', /control character/],
    ['x'.repeat(201), /longer than 200 bytes/],
    ['é'.repeat(101), /longer than 200 bytes/], // 202 bytes in UTF-8
  ])('refuses %j', (name, why) => {
    let err: unknown;
    try {
      validateForkName(name);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ArbError);
    expect((err as ArbError).code).toBe('ARB_BAD_NAME');
    expect((err as ArbError).message).toMatch(why);
  });
});

describe('baseOf and forkPathsOf', () => {
  it('puts the base beside the fork, hidden', () => {
    expect(baseOf('/a/b/turso.1')).toBe('/a/b/.turso.1.base');
    expect(baseOf('/a/b/turso.1/')).toBe('/a/b/.turso.1.base');
    expect(forkPathsOf('/src/turso', 'swebench')).toEqual({ fork: '/src/turso.swebench', base: '/src/.turso.swebench.base' });
  });
});

describe('findForks', () => {
  let work: string;
  beforeEach(() => {
    work = tempDir('arb-find-', '/var/tmp');
    for (const d of ['turso', 'turso.1', '.turso.1.base', 'turso.10', '.turso.10.base', 'turso.2', '.turso.3.base', 'turso.swebench', '.turso.swebench.base', 'other.1', '.other.1.base', 'turso..x', 'turso.']) {
      fs.mkdirSync(path.join(work, d));
    }
    fs.writeFileSync(path.join(work, 'turso.tar'), 'a file, not a fork');
  });
  afterEach(() => rmrf(work));

  it('pairs forks and bases beside the directory, numbers first in order', () => {
    const j = (n: string) => path.join(work, n);
    expect(findForks(j('turso'))).toEqual([
      { name: '1', fork: j('turso.1'), base: j('.turso.1.base') },
      { name: '2', fork: j('turso.2') },
      { name: '3', base: j('.turso.3.base') },
      { name: '10', fork: j('turso.10'), base: j('.turso.10.base') },
      { name: 'swebench', fork: j('turso.swebench'), base: j('.turso.swebench.base') },
    ]);
  });
});

describe('reserving names', () => {
  let work: string;
  beforeEach(() => {
    work = tempDir('arb-reserve-', '/var/tmp');
    fs.mkdirSync(path.join(work, 'p'));
  });
  afterEach(() => rmrf(work));

  it('takes the smallest N free as fork and base, and makes both', () => {
    fs.mkdirSync(path.join(work, 'p.1'));
    fs.mkdirSync(path.join(work, '.p.2.base'));
    expect(reserveNextFork(path.join(work, 'p'))).toEqual({ fork: path.join(work, 'p.3'), base: path.join(work, '.p.3.base') });
    expect(fs.statSync(path.join(work, 'p.3')).isDirectory()).toBe(true);
    expect(fs.statSync(path.join(work, '.p.3.base')).isDirectory()).toBe(true);
    expect(reserveNextFork(path.join(work, 'p')).fork).toBe(path.join(work, 'p.4'));
  });

  it('refuses a name that is taken, leaving nothing made', () => {
    fs.mkdirSync(path.join(work, '.p.x.base'));
    expect(() => reservePaths(forkPathsOf(path.join(work, 'p'), 'x'))).toThrow(/already exists/);
    expect(fs.readdirSync(work).sort()).toEqual(['.p.x.base', 'p']);
  });
});
