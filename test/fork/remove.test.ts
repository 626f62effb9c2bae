// Removing a half-made fork as the user who made it, whatever the modes the clone gave it.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { CLI, itIf, testEnv } from '../helpers/env';
import { asUser } from '../helpers/run';
import { rmrf, write } from './fixtures';

const env = testEnv();

describe('removeTree', () => {
  itIf(Boolean(env.user && env.userWork), env.userMissing)('removes, as the user, a tree with read-only directories that rm -rf cannot', () => {
    const user = env.user!;
    const work = fs.mkdtempSync(path.join(env.userWork!, 'remove-'));
    try {
      const tree = path.join(work, 'proj.1');
      write(path.join(tree, 'ro/a/b/file'), 'x\n', 0o444);
      write(path.join(tree, 'ro/other'), 'y\n');
      execFileSync('chown', ['-R', `${user.uid}:${user.gid}`, work]);
      for (const d of ['ro/a/b', 'ro/a', 'ro']) fs.chmodSync(path.join(tree, d), 0o555);
      // The pair: plain rm -rf, as the user, fails on it.
      const rm = asUser('/bin/rm', ['-rf', tree]);
      expect(rm.status).not.toBe(0);
      expect(rm.stderr).toContain('Permission denied');
      const removeJs = path.join(path.dirname(CLI), 'fork', 'remove.js');
      const r = asUser(process.execPath, ['-e', `require(${JSON.stringify(removeJs)}).removeTree(process.argv[1])`, tree]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(fs.readdirSync(work)).toEqual([]);
    } finally {
      rmrf(work);
    }
  });
});
