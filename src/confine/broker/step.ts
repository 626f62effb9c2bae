// The broker's step in arb confine's plan (src/confine/run.ts commonPlan): after the fork is made
// (the snapshot of its git configuration is taken then), before the policy (which reads the
// writable paths it adds).
//
// Where a tool it offers (gh) is on the PATH confine started with, and --headless is not given:
//   - starts the broker (server.ts): a private directory with the socket and the shims
//   - puts the shims first on the command's PATH, and sets CONFINE_SOCKET
//   - makes that directory a writable path, so it stays reachable in a private /tmp
//   - lets the command read arb itself wherever it is installed (the shim is arb), as the preset
//     step does for an agent's own files
//   - makes confine wait for the command (it serves requests meanwhile), and stops the broker
//     when the command has exited
import * as path from 'node:path';

import type { ConfinePlan, ConfineStep } from '../run';
import { commonlyWritable } from '../../paths/programs';
import { findTools } from './find-tools';
import { TOOLS } from './tools';

/** arb's own files: the package root (dist/, build/Release/arb.node, node_modules). */
function arbRoot(): string {
  return path.resolve(__dirname, '..', '..', '..');
}

/** The paths the command may write: once the policy is made, its grants; before, what it will grant. */
function writablePaths(plan: ConfinePlan): string[] {
  const grants = plan.policy?.grants ?? [];
  const given = plan.options.write.map((w) => path.resolve(plan.options.cwd, w));
  return [plan.dir, ...given, ...plan.extraWritable.map((e) => e.path), ...grants.filter((g) => g.access === 'write').map((g) => g.path)];
}

export const brokerStep: ConfineStep = async (plan) => {
  if (plan.options.headless) return;
  const cli = path.join(arbRoot(), 'dist', 'cli.js');
  // Never a gh the command could have put on PATH (in the directory, a -w path, /tmp, a cache).
  const untrusted = [...writablePaths(plan), ...commonlyWritable(plan.options.env, plan.home)];
  const programs = findTools(plan.options.env.PATH, TOOLS, cli, untrusted);
  if (Object.keys(programs).length === 0) return;
  // Nor a git for the broker's own checks.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  (require('../../git/private-git') as typeof import('../../git/private-git')).trustGitOutside(untrusted);

  // Loaded only now: the server brings net and child_process, which a start without gh need not.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { startBroker } = require('./server') as typeof import('./server');
  const broker = await startBroker({
    root: plan.dir,
    writable: () => writablePaths(plan),
    env: plan.options.env,
    home: plan.home,
    programs,
    cli,
    grants: () => plan.policy?.grants,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  if (!broker) return;
  plan.env = broker.commandEnv(plan.env);
  plan.extraWritable.push({ path: broker.dir, why: `asking confine to run ${broker.tools.join(', ')} outside (CONFINE_SOCKET)`, sockets: true });
  // The shim is arb: the command must be able to run it wherever arb is installed, in the home
  // directory or under /tmp (both hidden or private inside confine's namespaces and bwrap).
  plan.options.read.push(arbRoot());
  plan.waitReasons.push(`asking to run ${broker.tools.join(', ')} outside`);
  plan.notes.push(`${broker.tools.join(', ')} on PATH ask${broker.tools.length === 1 ? 's' : ''} confine, outside, to run the real one (${Object.values(programs).join(', ')}); --headless turns this off`);
  plan.afterExit.push(() => broker.close());
  // `confine gh …` itself goes through the shim too: look the command up again on the new PATH.
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const { commandStep } = require('../run') as typeof import('../run');
  await commandStep(plan);
};
