// Runs the built arb in a child process, as a user would.
import { SpawnSyncOptions, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { CLI, testEnv } from './env';

export interface RunResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  timeout?: number;
}

function result(r: ReturnType<typeof spawnSync>): RunResult {
  return {
    status: r.status,
    signal: r.signal,
    stdout: r.stdout ? r.stdout.toString() : '',
    stderr: r.stderr ? r.stderr.toString() : '',
  };
}

/** `arb ARGS…`, or an alias (fsfork, confine, fsdiff) by the name it is called by. */
export function arb(args: string[], options: RunOptions = {}, name = 'arb'): RunResult {
  const file = name === 'arb' ? CLI : aliasPath(name);
  const spawnOptions: SpawnSyncOptions = {
    cwd: options.cwd,
    env: options.env ?? process.env,
    input: options.input ?? '',
    timeout: options.timeout ?? 120_000,
    maxBuffer: 256 * 1024 * 1024,
  };
  return result(spawnSync(process.execPath, [file, ...args], spawnOptions));
}

/**
 * A link named `name` to the built cli.js, as npm's bin entries and scripts/install make, in the
 * directory global-setup made for the run (and teardown removes).
 */
export function aliasPath(name: string): string {
  const dir = testEnv().aliases;
  if (!dir) throw new Error('no directory for the aliases: see test/helpers/global-setup.ts');
  const link = path.join(dir, name);
  if (!fs.existsSync(link)) fs.symlinkSync(CLI, link);
  return link;
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = 'arb-test-', parent = os.tmpdir()): string {
  return fs.mkdtempSync(path.join(parent, prefix));
}

/** Runs a program as the unprivileged test user (runuser), with a clean environment. */
export function asUser(file: string, args: string[], options: RunOptions = {}): RunResult {
  const user = testEnv().user;
  if (!user) throw new Error('no test user: see test/helpers/global-setup.ts');
  const env: NodeJS.ProcessEnv = {
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    PATH: `${user.home}/.local/bin:/usr/local/bin:/usr/bin:/bin`,
    SHELL: '/bin/sh',
    LANG: 'C.UTF-8',
    ...options.env,
  };
  const envArgs = Object.entries(env)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  return result(
    spawnSync('runuser', ['-u', user.name, '--', 'env', '-i', ...envArgs, file, ...args], {
      cwd: options.cwd,
      input: options.input ?? '',
      timeout: options.timeout ?? 120_000,
      maxBuffer: 256 * 1024 * 1024,
    }),
  );
}

/** `arb ARGS…` run as the unprivileged test user. */
export function arbAsUser(args: string[], options: RunOptions = {}): RunResult {
  return asUser(process.execPath, [CLI, ...args], options);
}
