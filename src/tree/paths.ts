// Paths inside the trees arb diff compares. A file name is bytes, not text: a fork may hold names
// that are not UTF-8 (0xff, a lone continuation byte), and a patch must carry them as they are.
// So a path relative to a tree's root is kept as a "binary string", one character per byte
// (latin1), which compares, sorts and hashes byte by byte, and is turned into a Buffer only to
// reach the file system or git.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A path relative to a tree's root, '/'-separated, one character per byte; '' is the root. */
export type RelPath = string;

/**
 * The working directory's bytes. Node's process.cwd() decodes them as UTF-8, so a name that is not
 * UTF-8 comes back as another name (0xff as U+FFFD), maybe of another directory; on Linux the
 * kernel's own bytes are read from /proc/self/cwd.
 */
export function cwdBytes(): Buffer {
  if (process.platform === 'linux') {
    try {
      const b = fs.readlinkSync('/proc/self/cwd', { encoding: 'buffer' });
      if (b[0] === 0x2f) return b;
    } catch {
      /* no /proc: as Node has it */
    }
  }
  return Buffer.from(process.cwd());
}

/** A directory the user named (or its bytes), as the kernel takes it. */
export type Root = string | Buffer;

/**
 * The bytes of a root made absolute (`.` and `..` folded, as path.resolve does), against the
 * working directory's own bytes: relative names are resolved byte for byte.
 */
export function rootBytes(root: Root): Buffer {
  const text = typeof root === 'string' ? root : root.toString('latin1');
  const bytes = typeof root === 'string' ? Buffer.from(root) : root;
  if (text.startsWith('/')) return Buffer.from(path.posix.resolve(bytes.toString('latin1')), 'latin1');
  return Buffer.from(path.posix.resolve(cwdBytes().toString('latin1'), bytes.toString('latin1')), 'latin1');
}

/** rootBytes through the links the user named it by (as the walk and git see it), if it exists. */
export function realRootBytes(root: Root): Buffer {
  const bytes = rootBytes(root);
  try {
    // .native: Node's own realpath goes through UTF-8 text, and loses bytes that are not.
    return fs.realpathSync.native(bytes, { encoding: 'buffer' });
  } catch {
    return bytes;
  }
}

/** How a root is named in messages. */
export function showRoot(root: Root): string {
  return visible(typeof root === 'string' ? root : root.toString('utf8'));
}

/** The file-system path of `rel` under `root` (a Buffer, so that any byte survives). */
export function fsPath(root: Buffer, rel: RelPath): Buffer {
  return rel === '' ? root : Buffer.concat([root, Buffer.from(`/${rel}`, 'latin1')]);
}

export function joinRel(dir: RelPath, name: string): RelPath {
  return dir === '' ? name : `${dir}/${name}`;
}

// Control characters (C0, DEL, C1) and bidirectional overrides: a name holding them, printed as
// it is, could move the cursor, retitle or clear the terminal, or show text the name does not
// hold (`arb: all good`). A confined command chooses the names in its fork.
const UNSAFE_TEXT = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text from a tree (a name), safe to print to a terminal: unsafe characters as \xHH or \u{H}. */
export function visible(text: string): string {
  return text.replace(UNSAFE_TEXT, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

/** How a path is shown to a person: its bytes read as UTF-8 (odd bytes become U+FFFD). */
export function showRel(root: string, rel: RelPath): string {
  const name = visible(Buffer.from(rel, 'latin1').toString('utf8'));
  return rel === '' ? root : path.join(root, name);
}

/** The name's bytes as UTF-8 text, for messages. */
export function showName(rel: RelPath): string {
  return visible(Buffer.from(rel, 'latin1').toString('utf8'));
}

/**
 * Why git would refuse a path component in an index or a patch (so `git apply`, with its default
 * core.protectNTFS, would reject the whole patch), or undefined. `.git` itself is not asked
 * about: it is left out silently, as arb diff promises.
 */
export function refusedByGit(name: string, isSymlink: boolean): string | undefined {
  const lower = name.toLowerCase();
  // NTFS: `.git` followed by dots or spaces, or its 8.3 short name; any case.
  if (lower === '.git' || /^\.git[. ]+$/.test(lower) || /^git~\d+$/.test(lower)) {
    return 'git refuses names that stand for .git';
  }
  if (isSymlink && (/^\.gitmodules[. ]*$/.test(lower) || /^(gitmod|gi7eba)~\d+$/.test(lower))) {
    return 'git refuses a symbolic link named .gitmodules';
  }
  return undefined;
}

/** The base of a fork: `/a/b/turso.1` -> `/a/b/.turso.1.base`. */
export function baseOf(forkPath: string): string {
  const resolved = path.resolve(forkPath);
  return path.join(path.dirname(resolved), `.${path.basename(resolved)}.base`);
}

/** baseOf in bytes: a fork's name need not be UTF-8, nor the working directory's. */
export function baseBytesOf(fork: Root): Buffer {
  const resolved = rootBytes(fork).toString('latin1');
  return Buffer.from(path.posix.join(path.posix.dirname(resolved), `.${path.posix.basename(resolved)}.base`), 'latin1');
}
