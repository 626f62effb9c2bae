// ~/.config/confine/allow: what "Allow always" kept, one command per line ("gh pr create").
// It is in the home directory, which confine keeps from the command (neither readable nor
// writable there), and only confine, outside, reads and writes it. Made 0600 in a 0700 directory;
// read afresh at each request, so an edit by hand counts at once.
import * as fs from 'node:fs';
import * as path from 'node:path';

import { systemError } from '../../errors';

const HEADER = '# confine: what a confined command may run outside without asking, one command a line.\n# Added by "Allow always"; remove a line to be asked again.\n';

export function allowFilePath(home: string): string {
  return path.join(home, '.config', 'confine', 'allow');
}

/** The rules kept in the file: its lines, without blanks and # comments. */
export function parseAllowFile(text: string): Set<string> {
  const rules = new Set<string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/\s+/g, ' ');
    if (line && !line.startsWith('#')) rules.add(line);
  }
  return rules;
}

export function readAllowed(file: string): Set<string> {
  try {
    return parseAllowFile(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
    throw systemError('read', file, err);
  }
}

/** Adds a rule (once), making the file 0600 and its directory 0700 if they are missing. */
export function addAllowed(file: string, rule: string): void {
  if (/[\n\r]/.test(rule) || rule.trim() !== rule || rule === '') throw new RangeError(`bad rule ${JSON.stringify(rule)}`);
  if (readAllowed(file).has(rule)) return;
  const dir = path.dirname(file);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw systemError('make the directory', dir, err);
  }
  let fd: number;
  try {
    // O_NOFOLLOW: a link planted in its place is not written through.
    fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw systemError('open', file, err);
  }
  try {
    const st = fs.fstatSync(fd);
    if ((st.mode & 0o077) !== 0) fs.fchmodSync(fd, 0o600);
    let text = st.size === 0 ? `${HEADER}${rule}\n` : `${rule}\n`;
    if (st.size > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, st.size - 1);
      if (last[0] !== 0x0a) text = `\n${text}`;
    }
    fs.writeSync(fd, text);
  } catch (err) {
    throw systemError('write', file, err);
  } finally {
    fs.closeSync(fd);
  }
}
