// arb diff FORK | arb diff DIR1 DIR2 (fsdiff): prints the patch, exits as diff does.
import * as fs from 'node:fs';

import type { Argv } from 'yargs';

import type { Context } from '../cli';
import { sidesOf, withPatch } from '../diff/diff';
import { VisibleContent } from '../diff/terminal';
import { processesIn } from '../tree/processes';
import { visible } from '../tree/paths';

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
  if (data.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' ? resolve() : reject(err));
    process.stdout.once('error', onError);
    process.stdout.write(data, (err) => {
      process.stdout.off('error', onError);
      if (err && (err as NodeJS.ErrnoException).code !== 'EPIPE') reject(err);
      else resolve();
    });
  });
}

/** Writes the patch file to stdout a chunk at a time; on a terminal, in its visible form. */
async function printPatch(file: string): Promise<void> {
  const visible = process.stdout.isTTY ? new VisibleContent() : undefined;
  const fd = fs.openSync(file, 'r');
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(1 << 20);
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      await writeOut(visible ? visible.push(chunk) : chunk);
    }
    if (visible) await writeOut(visible.end());
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A fork some process still works in (a command confined with Landlock alone, or one it left
 * running) may change after the patch is made: say so, with the pids, and go on.
 */
function warnIfInUse(fork: string, ctx: Context): void {
  const pids = processesIn(fork);
  if (pids.length === 0) return;
  const shown = pids.slice(0, 5).join(', ') + (pids.length > 5 ? ', …' : '');
  process.stderr.write(
    `${ctx.program}: ${pids.length === 1 ? 'a process still works' : `${pids.length} processes still work`} in ${visible(fork)} (pid ${shown}): what ${pids.length === 1 ? 'it changes' : 'they change'} from now on is not in this patch\n`,
  );
}

export async function run(args: Record<string, unknown>, ctx: Context): Promise<number> {
  const first = args.FORK as string;
  const second = args.DIR2 as string | undefined;
  const sides = sidesOf(first, second);
  if (second === undefined) warnIfInUse(first, ctx);
  // The whole patch is made (in a file) before a byte is written, so that a failure prints nothing.
  return withPatch({ ...sides, warn: (m) => process.stderr.write(`${ctx.program}: ${m}\n`) }, async (patch) => {
    if (patch.size === 0) return 0;
    await printPatch(patch.path);
    return 1;
  });
}
