// Which tools the broker offers: those found on the PATH confine starts with. Light on purpose:
// confine's broker step calls it at every start, and loads the server only when a tool is found.
import * as fs from 'node:fs';

import { findProgram } from '../../paths/programs';
import type { Tool } from './tools/tool';

/** The first executable file called `name` on `PATH`, in no `untrusted` directory, or undefined. */
export const findOnPath = findProgram;

/**
 * The tools of `tools` installed on `searchPath`, by name, in directories the command cannot write
 * (`untrusted`). Links to arb itself (a shim) are not.
 */
export function findTools(searchPath: string | undefined, tools: readonly Tool[], cli?: string, untrusted: readonly string[] = []): Record<string, string> {
  const found: Record<string, string> = {};
  for (const tool of tools) {
    const file = findOnPath(tool.name, searchPath, untrusted);
    if (!file) continue;
    if (cli) {
      try {
        if (fs.realpathSync(file) === fs.realpathSync(cli)) continue;
      } catch {
        /* keep it */
      }
    }
    found[tool.name] = file;
  }
  return found;
}
