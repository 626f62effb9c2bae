// Trees for arb diff's tests: forks made as arb fork makes them, a snapshot of what a patch can
// carry (files with content and executable bit, links with targets), and git apply as a user
// runs it.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI } from '../helpers/env';

/** Runs git as a user would, with an identity and none of the machine's configuration. */
export function git(cwd: string, args: string[], input?: string | Buffer): string {
  return execFileSync('git', args, {
    cwd,
    input,
    encoding: 'utf8',
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  });
}

/** `git apply` with its default options, reading the patch on stdin, in `dir`. */
export function gitApply(dir: string, patch: string | Buffer): { status: number | null; stderr: string } {
  const r = spawnSync('git', ['apply'], {
    cwd: dir,
    input: patch,
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
  return { status: r.status, stderr: r.stderr.toString() };
}

export function write(file: string | Buffer, content: string | Buffer, mode?: number): void {
  fs.mkdirSync(path.dirname(file.toString()), { recursive: true });
  fs.writeFileSync(file, content);
  if (mode !== undefined) fs.chmodSync(file, mode);
}

/** A file name made of raw bytes under `dir`, as a Buffer path. */
export function raw(dir: string, name: Buffer | number[]): Buffer {
  return Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(name)]);
}

/**
 * Forks `dir` as arb fork does, with `cp -a` (which keeps times, modes and links): the base
 * `.NAME.N.base` and the fork `NAME.N` beside it. Returns the fork's path.
 */
export function cpFork(dir: string, n = 1): string {
  const parent = path.dirname(dir);
  const name = path.basename(dir);
  const base = path.join(parent, `.${name}.${n}.base`);
  const fork = path.join(parent, `${name}.${n}`);
  execFileSync('cp', ['-a', '--', dir, base]);
  execFileSync('cp', ['-a', '--', base, fork]);
  return fork;
}

/**
 * What a patch can carry of a tree: for each file, its executable bit and bytes; for each link,
 * its target. Keys are paths with one character per byte. `skip(rel)` leaves a path (and what
 * is under it) out.
 */
export function snapshot(root: string, skip: (rel: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    const dir = rel === '' ? Buffer.from(root) : Buffer.concat([Buffer.from(`${root}/`), Buffer.from(rel, 'latin1')]);
    for (const name of fs.readdirSync(dir, { encoding: 'latin1' })) {
      const childRel = rel === '' ? name : `${rel}/${name}`;
      if (name === '.git' || skip(childRel)) continue;
      const p = Buffer.concat([dir, Buffer.from(`/${name}`, 'latin1')]);
      const st = fs.lstatSync(p);
      if (st.isDirectory()) walk(childRel);
      else if (st.isSymbolicLink()) out[childRel] = `link ${fs.readlinkSync(p, { encoding: 'buffer' }).toString('latin1')}`;
      else if (st.isFile()) out[childRel] = `file ${st.mode & 0o100 ? 'x' : '-'} ${fs.readFileSync(p).toString('latin1')}`;
    }
  };
  walk('');
  return out;
}

/** `arb diff ARGS…` with its output as bytes (a patch may hold names that are not UTF-8). */
export function arbDiffBytes(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): { status: number | null; stdout: Buffer; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, 'diff', ...args], { cwd: options.cwd, env: options.env ?? process.env, maxBuffer: 1 << 30 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}
