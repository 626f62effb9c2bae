// Claude Code's ~/.claude.json through a copy (src/confine/state-copy.ts): copied in, and back
// only when the agent changed it; a change on both sides keeps the outside one and the agent's
// beside the copy.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { copyBack, copyIn } from '../../src/confine/state-copy';

describe('state-copy', () => {
  let dir: string;
  let file: string;
  let copy: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-state-'));
    file = path.join(dir, '.claude.json');
    fs.mkdirSync(path.join(dir, '.claude'));
    copy = path.join(dir, '.claude', '.claude.json');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('copies the file in (replacing a stale copy), private', () => {
    fs.writeFileSync(file, '{"a":1}');
    fs.writeFileSync(copy, 'stale');
    copyIn(file, copy);
    expect(fs.readFileSync(copy, 'utf8')).toBe('{"a":1}');
    expect(fs.statSync(copy).mode & 0o777).toBe(0o600);
  });

  it('keeps a copy an earlier run left newer than the file (confine killed) before replacing it', () => {
    fs.writeFileSync(file, '{"a":1}');
    fs.writeFileSync(copy, '{"a":1,"unsaved":true}');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file, old, old);
    const c = copyIn(file, copy);
    expect(c.stale).toBe(`${copy}.from-confine`);
    expect(fs.readFileSync(`${copy}.from-confine`, 'utf8')).toBe('{"a":1,"unsaved":true}');
    expect(fs.readFileSync(copy, 'utf8')).toBe('{"a":1}');
    // One the file is newer than (copied back, then changed outside) is simply replaced.
    fs.rmSync(`${copy}.from-confine`);
    fs.writeFileSync(copy, 'old');
    fs.utimesSync(copy, old, old);
    expect(copyIn(file, copy).stale).toBeUndefined();
  });

  it('copies back what the agent saved, and leaves the file alone when it saved nothing', () => {
    fs.writeFileSync(file, '{"a":1}');
    const same = copyIn(file, copy);
    expect(copyBack(same)).toEqual({ kind: 'unchanged' });
    const c = copyIn(file, copy);
    fs.writeFileSync(copy, '{"a":1,"mcpServers":{"x":{}}}');
    expect(copyBack(c)).toEqual({ kind: 'copied' });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1,"mcpServers":{"x":{}}}');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('a new user: no file, the agent makes the copy, it becomes the file', () => {
    const c = copyIn(file, copy);
    expect(fs.existsSync(copy)).toBe(false);
    fs.writeFileSync(copy, '{"firstStartTime":"x"}');
    expect(copyBack(c)).toEqual({ kind: 'copied' });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"firstStartTime":"x"}');
  });

  it('changed on both sides: the outside version stays, the agent’s is kept beside the copy', () => {
    fs.writeFileSync(file, '{"a":1}');
    const c = copyIn(file, copy);
    fs.writeFileSync(copy, '{"inside":true}');
    fs.writeFileSync(file, '{"outside":true}');
    const r = copyBack(c);
    expect(r).toEqual({ kind: 'conflict', keptAt: `${copy}.from-confine` });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"outside":true}');
    expect(fs.readFileSync(`${copy}.from-confine`, 'utf8')).toBe('{"inside":true}');
  });
});
