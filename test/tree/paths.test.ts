// Names git would refuse in a patch, and paths as fast-import takes them.
import { refusedByGit, showRel } from '../../src/tree/paths';
import { gitMode, quoteForFastImport } from '../../src/diff/patch';

describe('refusedByGit', () => {
  it.each(['.GIT', '.Git', '.git.', '.git ', '.git. .', 'git~1', 'GIT~2'])('refuses %j, which stands for .git somewhere', (name) => {
    expect(refusedByGit(name, false)).toMatch(/stand for \.git/);
  });

  it.each(['.gitignore', '.github', 'git', '.gitx', 'x.git', 'git~', '.gitmodules'])('takes %j', (name) => {
    expect(refusedByGit(name, false)).toBeUndefined();
  });

  it('refuses .gitmodules as a link only', () => {
    expect(refusedByGit('.gitmodules', true)).toMatch(/link named \.gitmodules/);
    expect(refusedByGit('.GITMODULES ', true)).toMatch(/link named \.gitmodules/);
    expect(refusedByGit('gitmod~1', true)).toMatch(/link/);
    expect(refusedByGit('.gitmodules', false)).toBeUndefined();
  });
});

describe('quoteForFastImport', () => {
  it('quotes every path, escaping only backslash, double quote and newline', () => {
    expect(quoteForFastImport('a b/c').toString('latin1')).toBe('"a b/c"');
    expect(quoteForFastImport('q"b\\s\nn').toString('latin1')).toBe('"q\\"b\\\\s\\nn"');
  });

  it('keeps any other byte as it is', () => {
    const rel = Buffer.from([0x62, 0xff, 0x09, 0x0d, 0xc3, 0xa9]).toString('latin1');
    expect([...quoteForFastImport(rel)]).toEqual([0x22, 0x62, 0xff, 0x09, 0x0d, 0xc3, 0xa9, 0x22]);
  });
});

describe('gitMode', () => {
  const st = { size: 0, mtimeMs: 0, dev: 0, ino: 0 };
  it('records links, and files by their owner executable bit only', () => {
    expect(gitMode({ ...st, type: 'symlink', perm: 0o777 })).toBe('120000');
    expect(gitMode({ ...st, type: 'file', perm: 0o744 })).toBe('100755');
    expect(gitMode({ ...st, type: 'file', perm: 0o655 })).toBe('100644');
    expect(gitMode({ ...st, type: 'file', perm: 0o600 })).toBe('100644');
  });
});

describe('showRel', () => {
  it('shows bytes as UTF-8, odd ones as U+FFFD', () => {
    expect(showRel('/r', Buffer.from('café/a', 'utf8').toString('latin1'))).toBe('/r/café/a');
    expect(showRel('/r', 'x\xff')).toBe('/r/x\ufffd');
    expect(showRel('/r', '')).toBe('/r');
  });
});
