// Makes what the tests need and the machine may not have: a loop-mounted XFS with reflink (the
// root file system here is ext4, which cannot share blocks) and an unprivileged user whose home
// holds fake secrets (root walks around sandboxes in ways a user cannot). Both need root; the
// teardown removes them.
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import { REPO_ROOT, TestEnv, STATE_FILE, mustHaveAll } from './env';

/**
 * The unprivileged user the tests run confined commands as. ARB_TEST_USER names another, so that
 * two checkouts can run their suites side by side without sharing a home or work directories.
 */
export const TEST_USER = process.env.ARB_TEST_USER || 'arbtest';

function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function makeXfs(env: TestEnv): void {
  if (process.getuid?.() !== 0) {
    env.xfsMissing = 'a loop-mounted XFS needs root';
    return;
  }
  if (spawnSync('mkfs.xfs', ['-V']).status !== 0) {
    env.xfsMissing = 'mkfs.xfs is missing (apt-get install xfsprogs)';
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-xfs-'));
  const image = path.join(dir, 'xfs.img');
  const mnt = path.join(dir, 'mnt');
  fs.mkdirSync(mnt);
  try {
    fs.closeSync(fs.openSync(image, 'w'));
    fs.truncateSync(image, 2 * 1024 * 1024 * 1024);
    sh('mkfs.xfs', ['-q', '-m', 'reflink=1', image]);
    sh('mount', ['-o', 'loop', image, mnt]);
    fs.chmodSync(mnt, 0o1777);
    env.xfs = mnt;
    env.xfsImage = image;
  } catch (err) {
    env.xfsMissing = `cannot make a loop-mounted XFS: ${(err as Error).message}`;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const SECRETS: Record<string, string> = {
  '.ssh/id_ed25519': 'FAKE-SSH-PRIVATE-KEY\n',
  '.ssh/config': 'Host *\n',
  '.aws/credentials': '[default]\naws_secret_access_key = FAKE-AWS-SECRET\n',
  '.netrc': 'machine example.com login me password FAKE-NETRC-PASSWORD\n',
  '.config/gh/hosts.yml': 'github.com:\n  oauth_token: FAKE-GH-TOKEN\n',
  '.bashrc': 'export SECRET_TOKEN=FAKE-BASHRC-TOKEN\n',
  '.profile': 'export OTHER_TOKEN=FAKE-PROFILE-TOKEN\n',
  '.zshrc': 'export ZSH_TOKEN=FAKE-ZSHRC-TOKEN\n',
  'notes.txt': 'FAKE-PRIVATE-NOTES\n',
  '.gitconfig': '[user]\n\tname = Arb Test\n\temail = arbtest@example.com\n',
  '.config/git/ignore': '*.swp\n',
  '.claude.json': '{"fake": true}\n',
  '.local/bin/mytool': '#!/bin/sh\necho mytool ran\n',
  '.cache/.keep': '',
  '.npm/.keep': '',
  '.cargo/credentials.toml': 'token = "FAKE-CARGO-TOKEN"\n',
  '.rustup/.keep': '',
};

function makeUser(env: TestEnv): void {
  if (process.getuid?.() !== 0) {
    env.userMissing = 'making an unprivileged test user needs root';
    return;
  }
  const home = `/home/${TEST_USER}`;
  try {
    if (spawnSync('id', ['-u', TEST_USER]).status !== 0) {
      sh('useradd', ['-m', '-d', home, '-s', '/bin/sh', TEST_USER]);
    }
    const uid = Number(sh('id', ['-u', TEST_USER]).trim());
    const gid = Number(sh('id', ['-g', TEST_USER]).trim());
    // A fresh home with fake secrets, every run.
    fs.rmSync(home, { recursive: true, force: true });
    fs.mkdirSync(home, { mode: 0o750 });
    for (const [rel, content] of Object.entries(SECRETS)) {
      const file = path.join(home, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content, { mode: rel.startsWith('.local/bin/') ? 0o755 : 0o600 });
    }
    sh('chown', ['-R', `${uid}:${gid}`, home]);
    // A directory the user owns outside its home and outside /tmp, for its projects.
    const work = `/var/lib/${TEST_USER}-work`;
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(work, { mode: 0o755 });
    fs.chownSync(work, uid, gid);
    // The user must be able to run the built arb from this checkout.
    const probe = spawnSync('runuser', ['-u', TEST_USER, '--', process.execPath, path.join(REPO_ROOT, 'dist', 'cli.js'), '--version']);
    if (probe.status !== 0) {
      env.userMissing = `user ${TEST_USER} cannot run ${REPO_ROOT}/dist/cli.js: ${probe.stderr.toString().trim()} (is every directory above the checkout searchable by others?)`;
      return;
    }
    env.user = { name: TEST_USER, uid, gid, home };
    env.userWork = work;
  } catch (err) {
    env.userMissing = `cannot make the test user ${TEST_USER}: ${(err as Error).message}`;
  }
}

/**
 * Copies the probe scripts that run confined to a directory everyone can read, outside /tmp and
 * any home directory (both hidden inside confine's namespaces), wherever the checkout is.
 */
function copyProbes(env: TestEnv): void {
  const dir = process.getuid?.() === 0 ? `/var/lib/${TEST_USER}-probes` : fs.mkdtempSync(path.join(os.tmpdir(), 'arb-probes-'));
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { mode: 0o755 });
  const from = path.join(REPO_ROOT, 'test', 'confine');
  for (const name of fs.readdirSync(from)) {
    if (!name.endsWith('.py')) continue;
    fs.copyFileSync(path.join(from, name), path.join(dir, name));
    fs.chmodSync(path.join(dir, name), 0o755);
  }
  fs.chmodSync(dir, 0o755);
  env.probes = dir;
}

export default async function globalSetup(): Promise<void> {
  const env: TestEnv = {};
  makeXfs(env);
  makeUser(env);
  copyProbes(env);
  env.aliases = fs.mkdtempSync(path.join(os.tmpdir(), 'arb-bin-'));
  const file = STATE_FILE;
  fs.writeFileSync(file, JSON.stringify(env, null, 2));
  process.env.ARB_TEST_STATE = file;
  if (mustHaveAll() && (env.xfsMissing || env.userMissing)) {
    throw new Error(`the test environment is incomplete: ${[env.xfsMissing, env.userMissing].filter(Boolean).join('; ')}`);
  }
}
