// The shim: arb called as `gh` (a link in the directory confine puts first on a confined
// command's PATH). It cannot run gh itself, which needs what the sandbox hides, so it asks confine,
// outside, over CONFINE_SOCKET: it sends its standard streams (as descriptors), its arguments,
// its working directory and the few variables gh may take from the command, waits, and exits as
// the real gh did, or says it was not allowed.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';

import { sendFds, unixConnect } from '../../native';
import { FDS_MARKER, FrameDecoder, PROTOCOL_VERSION, Reply, ToolRequest, encodeFrame, parseReply } from './protocol';
import { toolNamed } from './tools';

function say(line: string): void {
  try {
    fs.writeSync(2, `${line}\n`);
  } catch {
    /* no stderr */
  }
}

/** The descriptor to send for stream n: n itself, or /dev/null if the command closed it. */
function streamFd(n: number): number {
  try {
    fs.fstatSync(n);
    return n;
  } catch {
    return fs.openSync('/dev/null', n === 0 ? 'r' : 'w');
  }
}

/** The shim's exit status for a reply: the tool's, 128+N for a signal N, 1 otherwise. */
export function exitStatus(reply: Reply): number {
  if (reply.type !== 'exit') return 1;
  if (reply.status !== null) return reply.status;
  const n = reply.signal ? (os.constants.signals as Record<string, number>)[reply.signal] : undefined;
  return n !== undefined ? 128 + n : 1;
}

/** Runs the shim for `name` with these arguments; resolves with the exit status. */
export async function runShim(argv: string[], name = 'gh'): Promise<number> {
  const tool = toolNamed(name);
  const socketPath = process.env.CONFINE_SOCKET;
  if (!tool || !socketPath) {
    say(`${name}: this ${name} is confine's stand-in, which asks confine to run the real one, and ${!tool ? `confine runs no ${name}` : 'CONFINE_SOCKET is not set'}: run it from a command that arb confine started`);
    return 127;
  }
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch (err) {
    say(`confine: cannot run ${name}: the working directory is gone (${(err as NodeJS.ErrnoException).code})`);
    return 1;
  }
  const request: ToolRequest = { v: PROTOCOL_VERSION, tool: name, argv, cwd, env: tool.forwardEnv(process.env) };
  let frame: Buffer;
  try {
    frame = encodeFrame(request);
  } catch (err) {
    say(`confine: cannot run ${name}: ${(err as Error).message}`);
    return 1;
  }

  let fd: number;
  try {
    fd = unixConnect(socketPath);
  } catch (err) {
    say(`confine: cannot reach confine to run ${name} at ${socketPath} (${(err as NodeJS.ErrnoException).code}): has it exited?`);
    return 1;
  }
  try {
    sendFds(fd, FDS_MARKER, [0, 1, 2].map(streamFd));
  } catch (err) {
    fs.closeSync(fd);
    say(`confine: cannot pass the standard streams to confine (${(err as NodeJS.ErrnoException).code})`);
    return 1;
  }

  const socket = new net.Socket({ fd, readable: true, writable: true });
  return new Promise<number>((resolve) => {
    const decoder = new FrameDecoder();
    let done = false;
    const finish = (status: number): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(status);
    };
    socket.on('data', (chunk: Buffer) => {
      try {
        const frames = decoder.push(chunk);
        if (frames.length === 0) return;
        const reply = parseReply(frames[0]);
        if (reply.type === 'denied') say(`confine: ${reply.message}`);
        else if (reply.type === 'error') say(reply.message.startsWith('confine:') ? reply.message : `confine: ${reply.message}`);
        finish(exitStatus(reply));
      } catch (err) {
        say(`confine: a bad answer from confine: ${(err as Error).message}`);
        finish(1);
      }
    });
    const lost = (): void => {
      if (!done) say(`confine: lost the connection to confine while running ${name}`);
      finish(1);
    };
    socket.on('end', lost);
    socket.on('close', lost);
    socket.on('error', lost);
    socket.write(frame);
  });
}
