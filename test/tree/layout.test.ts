// src/fork and src/diff stand side by side on src/tree (the comparison of two trees, paths and
// names shown on a terminal, which repository a directory is in): neither imports the other.
import * as fs from 'node:fs';
import * as path from 'node:path';

const SRC = path.join(__dirname, '..', '..', 'src');

function importsOf(dir: string): { file: string; from: string }[] {
  const out: { file: string; from: string }[] = [];
  for (const name of fs.readdirSync(path.join(SRC, dir))) {
    if (!name.endsWith('.ts')) continue;
    const text = fs.readFileSync(path.join(SRC, dir, name), 'utf8');
    for (const m of text.matchAll(/(?:from|import\()\s*'([^']+)'/g)) out.push({ file: `${dir}/${name}`, from: m[1] });
  }
  return out;
}

test('src/fork imports nothing of src/diff', () => {
  expect(importsOf('fork').filter((i) => i.from.startsWith('../diff'))).toEqual([]);
});

test('src/diff imports nothing of src/fork', () => {
  expect(importsOf('diff').filter((i) => i.from.startsWith('../fork'))).toEqual([]);
});

test('src/tree imports neither', () => {
  expect(importsOf('tree').filter((i) => i.from.startsWith('../fork') || i.from.startsWith('../diff'))).toEqual([]);
});
