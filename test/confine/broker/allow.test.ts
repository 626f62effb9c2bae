// ~/.config/confine/allow: made private, one rule a line, read back as written.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { addAllowed, allowFilePath, parseAllowFile, readAllowed } from '../../../src/confine/broker/allow';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-allow-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

describe('the allow file', () => {
  it('is made 0600 in a 0700 directory, with each rule once', () => {
    const file = allowFilePath(home);
    expect(file).toBe(path.join(home, '.config', 'confine', 'allow'));
    expect(readAllowed(file).size).toBe(0);
    const old = process.umask(0o022);
    try {
      addAllowed(file, 'gh pr create');
      addAllowed(file, 'gh pr create');
      addAllowed(file, 'gh issue list');
    } finally {
      process.umask(old);
    }
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect([...readAllowed(file)]).toEqual(['gh pr create', 'gh issue list']);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^# confine:.*\n# .*\ngh pr create\ngh issue list\n$/);
  });

  it('reads lines, not comments or blanks, and adds after a last line without a newline', () => {
    expect([...parseAllowFile('# c\n\n  gh   pr  create \ngh api\n')]).toEqual(['gh pr create', 'gh api']);
    const file = allowFilePath(home);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'gh pr view', { mode: 0o600 });
    addAllowed(file, 'gh pr list');
    expect([...readAllowed(file)]).toEqual(['gh pr view', 'gh pr list']);
  });

  it('is not written through a link planted in its place', () => {
    const file = allowFilePath(home);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const target = path.join(home, 'elsewhere');
    fs.writeFileSync(target, '');
    fs.symlinkSync(target, file);
    expect(() => addAllowed(file, 'gh pr create')).toThrow(/ELOOP|too many levels/);
    expect(fs.readFileSync(target, 'utf8')).toBe('');
  });

  it('refuses a rule that would be two lines', () => {
    expect(() => addAllowed(allowFilePath(home), 'gh pr create\ngh auth token')).toThrow(RangeError);
  });
});
