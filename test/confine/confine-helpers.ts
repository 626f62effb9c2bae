// Shared by the confine tests: projects owned by the unprivileged test user, and probe.py run
// confined, its answers parsed so that each allowed/denied pair asserts an errno.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { REPO_ROOT, probe, testEnv } from '../helpers/env';
import { RunOptions, RunResult, arbAsUser } from '../helpers/run';

export const PROBE = probe('probe.py');

let counter = 0;
let area: string | undefined;

/**
 * The test user's work area for this test file: a directory of its own beside userWork (outside
 * home and /tmp), so that other test runs sharing the machine cannot remove it mid-run.
 * removeUserArea() removes it.
 */
export function userArea(): string {
  const env = testEnv();
  if (!env.user || !env.userWork) throw new Error('no test user');
  if (!area) {
    area = `${env.userWork}-confine-${process.pid}`;
    fs.mkdirSync(area, { recursive: true });
    fs.chownSync(area, env.user.uid, env.user.gid);
  }
  return area;
}

export function removeUserArea(): void {
  if (area) fs.rmSync(area, { recursive: true, force: true });
  area = undefined;
}

/** A fresh directory owned by the test user in its work area. */
export function userDir(prefix: string, parent?: string): string {
  const env = testEnv();
  if (!env.user) throw new Error('no test user');
  const dir = path.join(parent ?? userArea(), `${prefix}-${process.pid}-${++counter}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.chownSync(dir, env.user.uid, env.user.gid);
  return dir;
}

/** Writes a file as the test user would own it. */
export function userFile(file: string, content: string, mode = 0o644): string {
  const user = testEnv().user!;
  fs.writeFileSync(file, content, { mode });
  fs.chmodSync(file, mode);
  fs.chownSync(file, user.uid, user.gid);
  return file;
}

export interface ProbeRun {
  r: RunResult;
  /** "op arg" -> "OK" | errno name. */
  results: Record<string, string>;
}

export function parseProbe(stdout: string): Record<string, string> {
  const results: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^(\S+ .*) -> (\S+)$/.exec(line);
    if (m) results[m[1]] = m[2];
  }
  return results;
}

/** `arb confine [confineArgs] -- python3 probe.py OPS…` as the test user. */
export function confineProbe(confineArgs: string[], ops: string[], options: RunOptions = {}): ProbeRun {
  const r = arbAsUser(['confine', ...confineArgs, '--', 'python3', PROBE, ...ops], options);
  return { r, results: parseProbe(r.stdout) };
}

/** What probe.py answers for one op ("read:/x" -> result of "read /x"). */
export function answer(run: ProbeRun, op: string): string | undefined {
  const i = op.indexOf(':');
  return run.results[`${op.slice(0, i)} ${op.slice(i + 1)}`];
}

/** git's environment for fixtures: an identity, none of the machine's configuration. */
export const FIXTURE_GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

/** git on a fixture, never running what is in it (no hooks, no fsmonitor). */
export function fixtureGit(dir: string, args: string[]): string {
  return execFileSync('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'safe.directory=*', ...args], { cwd: dir, env: FIXTURE_GIT_ENV, encoding: 'utf8' });
}
