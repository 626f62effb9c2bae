// Removing a fork while a process left running in it swaps a directory for a link to elsewhere
// (issue 16): removal by path would follow the link and remove (or chmod) what is outside the
// tree. A swapper races the removal many times; nothing outside may change.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, itIf, testEnv } from '../helpers/env';

const env = testEnv();
const DIST = path.dirname(CLI);

// Swaps TREE/a/b for a link to VICTIM and back, as fast as it can, for SECONDS.
const SWAPPER = `
import os, sys, time
tree, victim, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
b = os.path.join(tree, 'a', 'b')
aside = os.path.join(tree, 'a', 'b-aside')
print('ready', flush=True)
end = time.time() + secs
while time.time() < end:
    try:
        os.rename(b, aside)
        os.symlink(victim, b)
        os.unlink(b)
        os.rename(aside, b)
    except OSError:
        pass
`;

const FILES = 150;

function makeTree(tree: string): void {
  const b = path.join(tree, 'a', 'b');
  fs.mkdirSync(path.join(b, 'sub'), { recursive: true });
  for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(b, `f${i}`), 'in the fork\n');
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(b, 'sub', `g${i}`), 'x\n');
  fs.chmodSync(path.join(b, 'sub'), 0o555); // made writable on the way: never through the link
}

function makeVictim(victim: string): void {
  fs.mkdirSync(path.join(victim, 'sub'), { recursive: true });
  fs.chmodSync(path.join(victim, 'sub'), 0o750);
  for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(victim, `f${i}`), 'outside\n');
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(victim, 'sub', `g${i}`), 'outside\n');
  fs.chmodSync(path.join(victim, 'sub'), 0o750);
}

function victimState(victim: string): string {
  const names = fs.readdirSync(victim).sort();
  const sub = fs.readdirSync(path.join(victim, 'sub')).sort();
  return `${names.length} ${sub.length} ${(fs.statSync(path.join(victim, 'sub')).mode & 0o777).toString(8)}`;
}

/**
 * Removes each of `trials` trees with `call` (a function of the built arb, in a child process run
 * as the test user, as confine --rm and --prune run) while a swapper, as the same user, swaps a
 * directory in it for a link to the user's own files outside; the state of those after each.
 */
async function race(module: string, call: string, trials: number): Promise<string[]> {
  const user = env.user!;
  const work = fs.mkdtempSync(path.join(env.userWork!, 'remove-race-'));
  const victim = path.join(work, 'victim');
  const asTheUser = { uid: user.uid, gid: user.gid };
  const removeJs = path.join(DIST, module);
  const remove = (tree: string) =>
    spawnSync(process.execPath, ['-e', `require(${JSON.stringify(removeJs)}).${call}(process.argv[1])`, tree], { ...asTheUser, encoding: 'utf8' });
  makeVictim(victim);
  const states: string[] = [];
  try {
    for (let t = 0; t < trials; t++) {
      const tree = path.join(work, `proj.${t}`);
      makeTree(tree);
      execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, work]);
      const before = victimState(victim);
      const swapper = spawn('python3', ['-c', SWAPPER, tree, victim, '3'], { ...asTheUser, stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => swapper.stdout.once('data', () => resolve()));
      remove(tree); // the swapper may make it fail: what matters is what is outside
      swapper.kill('SIGKILL');
      await new Promise((resolve) => swapper.once('close', resolve));
      states.push(`${before} -> ${victimState(victim)}`);
      // Then, with nothing swapping, the rest goes.
      if (fs.existsSync(tree)) execFileSync('rm', ['-rf', tree]);
      if (!fs.existsSync(path.join(victim, 'sub'))) makeVictim(victim);
      fs.chmodSync(path.join(victim, 'sub'), 0o750);
    }
    return states;
  } finally {
    execFileSync('rm', ['-rf', work]);
  }
}

const unchanged = (states: string[]) => states.filter((s) => s.split(' -> ')[0] !== s.split(' -> ')[1]);
const have = Boolean(env.user && env.userWork);

describe('removal with a directory swapped for a link mid-way', () => {
  itIf(have, env.userMissing)('removeTree (confine --rm, a half-made fork) removes nothing outside', async () => {
    expect(unchanged(await race('fork/remove.js', 'removeTree', 25))).toEqual([]);
  }, 120_000);

  itIf(have, env.userMissing)('prune removes nothing outside, nor changes its modes', async () => {
    expect(unchanged(await race('fork/prune.js', 'removeDirectory', 10))).toEqual([]);
  }, 120_000);
});
