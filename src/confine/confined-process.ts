// One way to start a program confined by a Landlock ruleset (landlock.ts's buildRuleset, from a
// policy's grants), with standard streams and a working directory given as descriptors, and wait
// for it. The broker runs the tool it was allowed (gh) with it.
//
// How: a fresh Node process (this file run as a script, with an empty environment, in /) gets the
// command's three streams as 0, 1, 2, the spec on a pipe (3: the tool's environment holds secrets,
// so never on its command line) and the working directory as descriptor 4. It reads the spec and
// becomes the program with native.landlockExec: chdir to /proc/self/fd/4, Landlock, execve. So the
// program runs in the directory that was opened, whatever its name leads to by then, and nothing
// is applied in a fork of the broker's Node process.
//
// This is the one place that does so: when confine gets a launcher of its own (a small native
// program that applies a plan and execs), this is what starts it instead.
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';

import type { LandlockRuleset } from './landlock';

export interface ConfinedProgram {
  /** Absolute path of the program. */
  file: string;
  /** Its arguments, argv[0] first. */
  argv: string[];
  env: Record<string, string>;
  /** A descriptor of the directory it runs in (opened by the caller, who closes it). */
  cwdFd: number;
  /** Its standard input, output and error. */
  stdio: [number, number, number];
  ruleset: LandlockRuleset;
}

export interface ConfinedExit {
  status: number | null;
  signal: NodeJS.Signals | null;
}

export interface ConfinedProcess {
  child: ChildProcess;
  /** Resolves when it has exited; rejects if it could not be started at all. */
  exited: Promise<ConfinedExit>;
}

/**
 * This file as JavaScript, run as a script: dist/confine/confined-process.js of the package arb
 * runs from (found up from here, which is dist/confine, dist for the bundled CLI, or src/confine).
 */
function script(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'dist', 'confine', 'confined-process.js');
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`cannot find dist/confine/confined-process.js above ${__dirname}`);
  }
}

const BIG = '$bigint';
const CHILD_MARK = '--arb-confined-process';

/** Starts `program` confined, as described at the top of this file. */
export function spawnConfined(program: ConfinedProgram): ConfinedProcess {
  const spec = JSON.stringify(
    {
      abi: program.ruleset.abi,
      handledAccessFs: program.ruleset.handledAccessFs,
      handledAccessNet: program.ruleset.handledAccessNet,
      scoped: program.ruleset.scoped,
      rules: program.ruleset.rules,
      netRules: program.ruleset.netRules,
      file: program.file,
      argv: program.argv,
      env: Object.entries(program.env).map(([k, v]) => `${k}=${v}`),
      cwd: '/proc/self/fd/4',
    },
    (_k, v: unknown) => (typeof v === 'bigint' ? { [BIG]: v.toString() } : v),
  );
  const child = spawn(process.execPath, [script(), CHILD_MARK], {
    cwd: '/',
    env: {},
    stdio: [program.stdio[0], program.stdio[1], program.stdio[2], 'pipe', program.cwdFd],
  });
  const exited = new Promise<ConfinedExit>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (status, signal) => resolve({ status, signal }));
  });
  const pipe = child.stdio[3] as NodeJS.WritableStream | null;
  pipe?.on('error', () => undefined);
  pipe?.end(spec);
  return { child, exited };
}

/** The child's side: read the spec (descriptor 3 is a socket: read as a stream), become the program. */
function main(): void {
  const chunks: Buffer[] = [];
  const input = new net.Socket({ fd: 3, readable: true, writable: false });
  input.on('data', (b: Buffer) => chunks.push(b));
  input.on('error', (err) => fail(`cannot read what to run: ${err.message}`, 1));
  input.on('end', () => {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const native = require('../native') as typeof import('../native');
    let spec: import('../native').LandlockSpec;
    try {
      spec = JSON.parse(Buffer.concat(chunks).toString('utf8'), (_k, v: unknown) =>
        v !== null && typeof v === 'object' && BIG in v ? BigInt((v as Record<string, string>)[BIG]) : v,
      ) as import('../native').LandlockSpec;
    } catch (err) {
      return fail(`cannot read what to run: ${(err as Error).message}`, 1);
    }
    try {
      native.landlockExec(spec);
    } catch (err) {
      const e = err as import('../native').ConfineFailure;
      fail(`cannot run ${spec.file} confined: ${e.message}`, e.syscall === 'execve' ? (e.code === 'ENOENT' ? 127 : 126) : 1);
    }
  });
}

function fail(message: string, status: number): never {
  fs.writeSync(2, `confine: ${message}\n`);
  process.exit(status);
}

// Run as the script spawnConfined starts (never when this module is merely loaded, bundled or not).
if (require.main === module && process.argv[2] === CHILD_MARK) main();
