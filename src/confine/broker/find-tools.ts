// Which tools the broker offers: those found on the PATH confine starts with. Light on purpose:
// confine's broker step calls it at every start, and loads the server only when a tool is found.
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { Tool } from './tools/tool';

/** The first executable file called `name` on `PATH`, or undefined. */
export function findOnPath(name: string, searchPath: string | undefined): string | undefined {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const file = path.join(dir, name);
    try {
      const st = fs.statSync(file);
      if (st.isFile()) {
        fs.accessSync(file, fs.constants.X_OK);
        return file;
      }
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** The tools of `tools` installed on `searchPath`, by name. Links to arb itself (a shim) are not. */
export function findTools(searchPath: string | undefined, tools: readonly Tool[], cli?: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const tool of tools) {
    const file = findOnPath(tool.name, searchPath);
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
