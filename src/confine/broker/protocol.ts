// What the shim and the broker say to each other over CONFINE_SOCKET. The shim runs inside the
// sandbox, so everything it sends is untrusted: each message is bounded in size and checked field
// by field before anything acts on it, and anything else ends the connection.
//
//   shim -> broker   one byte (FDS_MARKER) carrying the shim's descriptors 0, 1, 2 (SCM_RIGHTS)
//   shim -> broker   one frame: the request (ToolRequest)
//   broker -> shim   one frame: the reply (Reply), then the broker closes the connection
//
// A frame is a 4-byte big-endian length and that many bytes of UTF-8 JSON.

/** The byte that carries the standard streams; anything else first is garbage. */
export const FDS_MARKER = 0x46; // 'F'
/** The descriptors the shim sends: its stdin, stdout and stderr. */
export const STREAM_COUNT = 3;
/** A request larger than this is refused without reading it: ample for any gh command line. */
export const MAX_FRAME_BYTES = 256 * 1024;
export const MAX_ARGS = 4096;
export const MAX_ENV = 256;
export const PROTOCOL_VERSION = 1;

export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

export interface ToolRequest {
  v: typeof PROTOCOL_VERSION;
  /** The tool asked for: 'gh'. */
  tool: string;
  /** Its arguments, without the tool's name. */
  argv: string[];
  /** The shim's working directory, as the command sees it. */
  cwd: string;
  /** The variables the shim forwards (each tool says which; the broker filters them again). */
  env: Record<string, string>;
}

export type Reply =
  /** The tool ran: its exit status, or the signal that ended it. */
  | { type: 'exit'; status: number | null; signal: string | null }
  /** The user (or a rule) did not allow it; `message` says what and why. */
  | { type: 'denied'; message: string }
  /** The request could not be served; `message` says why. */
  | { type: 'error'; message: string };

export function encodeFrame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.length > MAX_FRAME_BYTES) {
    throw new ProtocolError(`message too large (${body.length} bytes, at most ${MAX_FRAME_BYTES})`);
  }
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

/**
 * Splits a byte stream into frames. A length over the limit is refused as soon as its header
 * arrives, so an oversized message is never buffered.
 */
export class FrameDecoder {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly maxBytes = MAX_FRAME_BYTES) {}

  /** Adds bytes; returns the frames now complete, each parsed as JSON. */
  push(chunk: Buffer): unknown[] {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const frames: unknown[] = [];
    for (;;) {
      if (this.buffered.length < 4) break;
      const length = this.buffered.readUInt32BE(0);
      if (length > this.maxBytes) {
        throw new ProtocolError(`message too large (${length} bytes, at most ${this.maxBytes})`);
      }
      if (this.buffered.length < 4 + length) break;
      const body = this.buffered.subarray(4, 4 + length);
      this.buffered = this.buffered.subarray(4 + length);
      let value: unknown;
      try {
        value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
      } catch {
        throw new ProtocolError('message is not UTF-8 JSON');
      }
      frames.push(value);
    }
    return frames;
  }

  /** Bytes received that do not yet make a frame. */
  get pending(): number {
    return this.buffered.length;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string fit to be an argument, a path or a variable: no NUL, which execve would cut at. */
function isCleanString(v: unknown): v is string {
  return typeof v === 'string' && !v.includes('\0');
}

/** Checks a request from the shim field by field; throws ProtocolError on anything else. */
export function parseRequest(value: unknown): ToolRequest {
  if (!isPlainObject(value)) throw new ProtocolError('request is not an object');
  if (value.v !== PROTOCOL_VERSION) throw new ProtocolError(`unknown protocol version ${JSON.stringify(value.v)}`);
  const { tool, argv, cwd, env } = value;
  if (!isCleanString(tool) || !/^[a-z][a-z0-9-]{0,31}$/.test(tool)) throw new ProtocolError('bad tool name');
  if (!Array.isArray(argv) || argv.length > MAX_ARGS || !argv.every(isCleanString)) {
    throw new ProtocolError('bad argv');
  }
  if (!isCleanString(cwd) || !cwd.startsWith('/')) throw new ProtocolError('bad cwd');
  if (!isPlainObject(env)) throw new ProtocolError('bad env');
  const entries = Object.entries(env);
  if (entries.length > MAX_ENV) throw new ProtocolError('bad env');
  const cleanEnv: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || !isCleanString(v)) throw new ProtocolError('bad env');
    cleanEnv[k] = v;
  }
  return { v: PROTOCOL_VERSION, tool, argv: [...argv] as string[], cwd, env: cleanEnv };
}

/** Checks the broker's reply (the shim trusts the broker, but not a socket someone else made). */
export function parseReply(value: unknown): Reply {
  if (!isPlainObject(value)) throw new ProtocolError('reply is not an object');
  if (value.type === 'exit') {
    const status = value.status;
    const signal = value.signal;
    if ((status === null || (Number.isInteger(status) && (status as number) >= 0 && (status as number) <= 255)) &&
        (signal === null || typeof signal === 'string')) {
      return { type: 'exit', status: status as number | null, signal: signal as string | null };
    }
  } else if ((value.type === 'denied' || value.type === 'error') && typeof value.message === 'string') {
    return { type: value.type, message: value.message };
  }
  throw new ProtocolError('unknown reply');
}
