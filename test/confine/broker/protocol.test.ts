// The broker's wire format: frames, limits, and what a request may hold.
import { FrameDecoder, MAX_FRAME_BYTES, ProtocolError, encodeFrame, parseReply, parseRequest } from '../../../src/confine/broker/protocol';

const good = { v: 1, tool: 'gh', argv: ['pr', 'create', '--title', 'x y'], cwd: '/work/p', env: { TERM: 'xterm' } };

describe('frames', () => {
  it('come back whole however the bytes are split', () => {
    const bytes = Buffer.concat([encodeFrame(good), encodeFrame({ type: 'exit', status: 0, signal: null })]);
    const d = new FrameDecoder();
    const got: unknown[] = [];
    for (let i = 0; i < bytes.length; i += 3) got.push(...d.push(bytes.subarray(i, i + 3)));
    expect(got).toEqual([good, { type: 'exit', status: 0, signal: null }]);
    expect(d.pending).toBe(0);
  });

  it('refuse an oversized message as soon as its length arrives', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(MAX_FRAME_BYTES + 1, 0);
    expect(() => new FrameDecoder().push(header)).toThrow(/too large/);
    expect(() => encodeFrame({ argv: ['x'.repeat(MAX_FRAME_BYTES)] })).toThrow(ProtocolError);
  });

  it('refuse bytes that are not UTF-8 JSON', () => {
    const body = Buffer.from('not json{');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length, 0);
    expect(() => new FrameDecoder().push(Buffer.concat([header, body]))).toThrow(/not UTF-8 JSON/);
    const bad = Buffer.from([0x22, 0xff, 0x22]);
    header.writeUInt32BE(bad.length, 0);
    expect(() => new FrameDecoder().push(Buffer.concat([header, bad]))).toThrow(/not UTF-8 JSON/);
  });
});

describe('parseRequest', () => {
  it('takes a well-formed request', () => {
    expect(parseRequest(good)).toEqual(good);
  });

  it.each([
    ['not an object', 'x'],
    ['another version', { ...good, v: 2 }],
    ['a tool name with a slash', { ...good, tool: '../gh' }],
    ['an argument with a NUL', { ...good, argv: ['a\0b'] }],
    ['an argument that is not a string', { ...good, argv: [1] }],
    ['a relative directory', { ...good, cwd: 'p' }],
    ['a variable with a bad name', { ...good, env: { 'A=B': 'x' } }],
    ['a variable that is not a string', { ...good, env: { A: 1 } }],
    ['too many arguments', { ...good, argv: new Array(5000).fill('x') }],
  ])('refuses %s', (_what, value) => {
    expect(() => parseRequest(value)).toThrow(ProtocolError);
  });
});

describe('parseReply', () => {
  it('takes the three kinds of reply and nothing else', () => {
    expect(parseReply({ type: 'exit', status: 3, signal: null })).toEqual({ type: 'exit', status: 3, signal: null });
    expect(parseReply({ type: 'exit', status: null, signal: 'SIGTERM' })).toEqual({ type: 'exit', status: null, signal: 'SIGTERM' });
    expect(parseReply({ type: 'denied', message: 'no' })).toEqual({ type: 'denied', message: 'no' });
    expect(() => parseReply({ type: 'exit', status: 300, signal: null })).toThrow(ProtocolError);
    expect(() => parseReply({ type: 'run' })).toThrow(ProtocolError);
  });
});
