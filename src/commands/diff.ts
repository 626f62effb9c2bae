// arb diff FORK | arb diff DIR1 DIR2 (fsdiff): prints the patch, exits as diff does.
import type { Argv } from 'yargs';

import type { Context } from '../cli';
import { diffTrees, sidesOf } from '../diff/diff';

export function builder(y: Argv): Argv {
  return y
    .positional('FORK', {
      describe: 'a fork made by arb fork (compared with its base .NAME.base beside it), or the old directory',
      type: 'string',
    })
    .positional('DIR2', { describe: 'the new directory, to compare DIR1 with', type: 'string' })
    .example('arb diff ../proj.1', 'what changed in the fork ../proj.1 since it was made')
    .example('arb diff ../proj.1 | git apply', 'bring those changes into the working directory')
    .epilogue('Exit status: 0 nothing changed, 1 something did, 2 trouble (nothing is printed then). See man fsdiff.');
}

/** Writes all of `data` to stdout; a reader that went away (EPIPE) is not an error. */
function writeOut(data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? resolve() : reject(err)));
    process.stdout.write(data, (err) => (err && (err as NodeJS.ErrnoException).code !== 'EPIPE' ? reject(err) : resolve()));
  });
}

export async function run(args: Record<string, unknown>, ctx: Context): Promise<number> {
  const first = args.FORK as string;
  const second = args.DIR2 as string | undefined;
  const sides = sidesOf(first, second);
  // The whole patch is made before a byte is written, so that a failure prints nothing.
  const patch = await diffTrees({ ...sides, warn: (m) => process.stderr.write(`${ctx.program}: ${m}\n`) });
  if (patch.length === 0) return 0;
  await writeOut(patch);
  return 1;
}
