// Placeholder: filled in by the work on this command.
import type { Argv } from 'yargs';

import type { Context } from '../cli';
import { ArbError } from '../errors';

export function builder(y: Argv): Argv {
  return y;
}

export async function run(_args: Record<string, unknown>, _ctx: Context): Promise<number> {
  throw new ArbError('ARB_INTERNAL', 'not built yet');
}
