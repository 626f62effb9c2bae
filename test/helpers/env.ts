// What the test machine offers, as found by global-setup.ts: a loop-mounted XFS that shares
// blocks, and an unprivileged user whose home holds fake secrets. Where one is missing, the tests
// that need it are skipped with the reason, except under CI (or ARB_REQUIRE_ALL=1), where a
// missing one fails the run: these are the checks that must not be skipped silently.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface TestEnv {
  /** Mount point of a reflink-capable XFS, writable by everyone (mode 1777). */
  xfs?: string;
  xfsImage?: string;
  /** Why there is no XFS. */
  xfsMissing?: string;
  /** An unprivileged user, and its home with fake secrets. */
  user?: { name: string; uid: number; gid: number; home: string };
  userMissing?: string;
  /** A directory the user owns outside its home, for its projects (not under /tmp). */
  userWork?: string;
  /** Where the probe scripts confined commands run are copied (see probe()). */
  probes?: string;
  /** Where links named fsfork, confine, fsdiff… to the built cli.js go (test/helpers/run.ts). */
  aliases?: string;
}

export const STATE_FILE = path.join(os.tmpdir(), `arb-test-env-${process.ppid}-state.json`);

export function stateFile(): string {
  return process.env.ARB_TEST_STATE ?? STATE_FILE;
}

export function testEnv(): TestEnv {
  const file = stateFile();
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as TestEnv) : {};
}

export function mustHaveAll(): boolean {
  return process.env.CI === 'true' || process.env.ARB_REQUIRE_ALL === '1';
}

/** `it` if the environment has the feature, else `it.skip` with the reason printed once. */
export function itIf(available: boolean, reason: string | undefined): jest.It {
  if (available) return it;
  if (mustHaveAll()) {
    throw new Error(`required test environment missing: ${reason}`);
  }
  // eslint-disable-next-line no-console
  console.warn(`skipped: ${reason}`);
  return it.skip;
}

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

/**
 * A probe script (test/confine/NAME) as a confined command can reach it. The checkout may be
 * anywhere, /tmp included, and /tmp and the home directory are private or hidden inside
 * confine's namespaces; so global-setup copies the probes to a directory outside them.
 */
export function probe(name: string): string {
  const dir = testEnv().probes;
  return dir ? path.join(dir, name) : path.join(REPO_ROOT, 'test', 'confine', name);
}
