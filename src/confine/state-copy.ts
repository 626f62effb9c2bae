// An agent's state file that lives directly in the home directory (Claude Code's ~/.claude.json:
// MCP servers, projects, settings), which a confined command cannot update: Claude Code writes it
// by making `~/.claude.json.lock` and `~/.claude.json.tmp.*` beside it and renaming, and nothing
// may be made in the home directory (EROFS in the namespaces and the bwrap jail, where it then
// gives up; EACCES under Landlock alone, where it falls back to writing in place).
//
// So the agent gets a copy in its own writable directory, and is told to use that directory
// (CLAUDE_CONFIG_DIR, where Claude Code then keeps .claude.json): confine copies the file in
// before the command starts, and back when it exits, if the agent changed it. If the file also
// changed outside meanwhile (another Claude Code, unconfined), the outside version stays and the
// agent's is kept beside the copy, named in a warning: nothing is lost silently. The home
// directory's file is never readable by the command itself.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** What was copied in: the content at start (undefined: the file did not exist). */
export interface CopiedIn {
  file: string;
  copy: string;
  before?: Buffer;
}

function read(p: string): Buffer | undefined {
  try {
    return fs.readFileSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Writes `data` to `file` through a temporary file and a rename, mode 0600. */
function replace(file: string, data: Buffer): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.arb-${process.pid}`);
  fs.writeFileSync(tmp, data, { mode: 0o600, flag: 'w' });
  fs.renameSync(tmp, file);
}

/**
 * Copies `file` to `copy`, before the command. A copy left newer than the file and different
 * from it (a run whose confine was killed before it could copy back) is first kept at
 * `copy` + `.from-confine`, its path returned in `stale`.
 */
export function copyIn(file: string, copy: string): CopiedIn & { stale?: string } {
  const before = read(file);
  const left = read(copy);
  let stale: string | undefined;
  if (left !== undefined && (before === undefined || !left.equals(before)) && (mtime(copy) ?? 0) > (mtime(file) ?? 0)) {
    stale = `${copy}.from-confine`;
    replace(stale, left);
  }
  if (before !== undefined) replace(copy, before);
  else fs.rmSync(copy, { force: true });
  return { file, copy, before, ...(stale ? { stale } : {}) };
}

function mtime(p: string): number | undefined {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return undefined;
  }
}

/** What copyBack did, for a message. */
export type CopyBack = { kind: 'unchanged' } | { kind: 'copied' } | { kind: 'conflict'; keptAt: string };

/**
 * After the command: the copy replaces the file if the agent changed it and the file did not
 * change outside meanwhile; if both changed, the outside version stays and the agent's is kept
 * at `copy` + `.from-confine`.
 */
export function copyBack(c: CopiedIn): CopyBack {
  const after = read(c.copy);
  if (after === undefined || (c.before !== undefined && after.equals(c.before))) return { kind: 'unchanged' };
  const outside = read(c.file);
  const untouched = outside === undefined ? c.before === undefined : c.before !== undefined && outside.equals(c.before);
  if (untouched) {
    replace(c.file, after);
    return { kind: 'copied' };
  }
  const keptAt = `${c.copy}.from-confine`;
  replace(keptAt, after);
  return { kind: 'conflict', keptAt };
}
