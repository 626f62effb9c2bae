import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

import { TestEnv, stateFile } from './env';

export default async function globalTeardown(): Promise<void> {
  const file = stateFile();
  if (!fs.existsSync(file)) return;
  const env = JSON.parse(fs.readFileSync(file, 'utf8')) as TestEnv;
  if (env.xfs) {
    // Lazy unmount: a test that left a process in it must not leave the image mounted.
    spawnSync('umount', ['-l', env.xfs]);
    if (env.xfsImage) fs.rmSync(path.dirname(env.xfsImage), { recursive: true, force: true });
  }
  if (env.userWork) fs.rmSync(env.userWork, { recursive: true, force: true });
  if (env.probes) fs.rmSync(env.probes, { recursive: true, force: true });
  if (env.aliases) fs.rmSync(env.aliases, { recursive: true, force: true });
  fs.rmSync(file, { force: true });
}
