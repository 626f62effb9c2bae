// isInside: the one answer to "is this path inside that directory", and its edges.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { isInside, isInsideAny, resolveExisting } from '../../src/paths/inside';

describe('isInside, by name', () => {
  it('takes a name that starts with two dots for a name: /w/..bin is inside /w', () => {
    expect(isInside('/w/..bin', '/w', 'lexical')).toBe(true);
    expect(isInside('/w/..', '/w', 'lexical')).toBe(false);
    expect(isInside('/w/../bin', '/w', 'lexical')).toBe(false);
    expect(isInside('/w/a/../../w2', '/w', 'lexical')).toBe(false);
    expect(isInside('/w/...', '/w', 'lexical')).toBe(true);
  });

  it('is not fooled by a common prefix', () => {
    expect(isInside('/work', '/w', 'lexical')).toBe(false);
    expect(isInside('/w-x/y', '/w', 'lexical')).toBe(false);
  });

  it('counts the directory itself, with or without a trailing slash', () => {
    expect(isInside('/w', '/w', 'lexical')).toBe(true);
    expect(isInside('/w/', '/w', 'lexical')).toBe(true);
    expect(isInside('/w', '/w/', 'lexical')).toBe(true);
    expect(isInside('/w/x/', '/w/', 'lexical')).toBe(true);
  });

  it('has everything inside /, and / inside nothing else', () => {
    expect(isInside('/', '/', 'lexical')).toBe(true);
    expect(isInside('/etc/passwd', '/', 'lexical')).toBe(true);
    expect(isInside('/', '/w', 'lexical')).toBe(false);
  });

  it('any of several', () => {
    expect(isInsideAny('/b/..x/y', ['/a', '/b'], 'lexical')).toBe(true);
    expect(isInsideAny('/c', ['/a', '/b'], 'lexical')).toBe(false);
    expect(isInsideAny('/c', [], 'lexical')).toBe(false);
  });
});

describe('isInside, after links', () => {
  let base: string;
  beforeEach(() => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'arb-inside-')));
    fs.mkdirSync(path.join(base, 'w', 'sub'), { recursive: true });
    fs.mkdirSync(path.join(base, 'out'));
    fs.symlinkSync(path.join(base, 'out'), path.join(base, 'w', 'link-out'));
    fs.symlinkSync(path.join(base, 'w', 'sub'), path.join(base, 'link-in'));
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('a link in the directory to outside is outside when resolved, inside by name', () => {
    const p = path.join(base, 'w', 'link-out', 'secret');
    expect(isInside(p, path.join(base, 'w'), 'lexical')).toBe(true);
    expect(isInside(p, path.join(base, 'w'), 'resolved')).toBe(false);
  });

  it('a link outside to the directory is inside when resolved, outside by name', () => {
    const p = path.join(base, 'link-in', 'file');
    expect(isInside(p, path.join(base, 'w'), 'lexical')).toBe(false);
    expect(isInside(p, path.join(base, 'w'), 'resolved')).toBe(true);
  });

  it('resolves the directory too', () => {
    expect(isInside(path.join(base, 'w', 'sub', 'x'), path.join(base, 'link-in'), 'resolved')).toBe(true);
  });

  it('resolves a path that does not exist yet through its nearest existing parent', () => {
    expect(resolveExisting(path.join(base, 'w', 'link-out', 'new', 'deeper'))).toBe(path.join(base, 'out', 'new', 'deeper'));
    expect(isInside(path.join(base, 'w', 'link-out', 'new'), path.join(base, 'w'), 'resolved')).toBe(false);
    expect(isInside(path.join(base, 'w', 'new', '..bin'), path.join(base, 'w'), 'resolved')).toBe(true);
  });
});
