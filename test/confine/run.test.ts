// Finding the program as execvp does, before anything is made: 127 and 126 decided here.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { resolveCommand } from '../../src/confine/run';
import { tempDir } from '../helpers/run';

describe('resolveCommand', () => {
  let root: string;
  beforeAll(() => {
    root = tempDir('arb-resolve-');
    for (const d of ['a', 'b', 'work', 'work/sub']) fs.mkdirSync(path.join(root, d), { recursive: true });
    const write = (rel: string, mode: number) => {
      fs.writeFileSync(path.join(root, rel), '#!/bin/sh\n');
      fs.chmodSync(path.join(root, rel), mode);
    };
    write('a/tool', 0o644); // on PATH first, but not runnable
    write('b/tool', 0o755);
    write('a/only-plain', 0o644);
    write('work/local', 0o755);
    write('work/sub/script', 0o755);
    fs.mkdirSync(path.join(root, 'b', 'dir-named'));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const P = () => `${root}/a:${root}/b`;

  it('looks in each PATH entry in turn, skipping one where it cannot be run', () => {
    expect(resolveCommand('tool', `${root}/work`, P())).toEqual({ file: `${root}/b/tool` });
  });

  it('127 when nowhere on PATH', () => {
    expect(resolveCommand('nothing', `${root}/work`, P())).toEqual({ error: 'not-found', message: 'nothing: command not found' });
    expect(resolveCommand('', `${root}/work`, P())).toMatchObject({ error: 'not-found' });
  });

  it('126 when found only where it cannot be run (a plain file, a directory)', () => {
    expect(resolveCommand('only-plain', `${root}/work`, P())).toMatchObject({ error: 'not-executable', message: expect.stringContaining(`${root}/a/only-plain`) });
    expect(resolveCommand('dir-named', `${root}/work`, P())).toMatchObject({ error: 'not-executable' });
  });

  it('a name with a / is a path, relative to the directory the command runs in', () => {
    expect(resolveCommand('./local', `${root}/work`, P())).toEqual({ file: `${root}/work/local` });
    expect(resolveCommand('sub/script', `${root}/work`, P())).toEqual({ file: `${root}/work/sub/script` });
    expect(resolveCommand(`${root}/b/tool`, '/', P())).toEqual({ file: `${root}/b/tool` });
    expect(resolveCommand('./missing', `${root}/work`, P())).toMatchObject({ error: 'not-found' });
    expect(resolveCommand('./sub', `${root}/work`, P())).toEqual({ error: 'not-executable', message: './sub: is a directory' });
  });

  it('an empty PATH entry is the directory; no PATH at all is /bin:/usr/bin', () => {
    expect(resolveCommand('local', `${root}/work`, `${root}/a::${root}/b`)).toEqual({ file: `${root}/work/local` });
    expect(resolveCommand('sh', `${root}/work`, undefined)).toEqual({ file: '/bin/sh' });
  });
});
