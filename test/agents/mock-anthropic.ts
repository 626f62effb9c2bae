// A stand-in for Anthropic's Messages API (POST /v1/messages, streamed as server-sent events or
// not), for Claude Code and opencode's anthropic provider. It runs inside the confined command's
// network namespace, so nothing leaves the machine. Each conversation is two turns: the first
// answer is one call of the agent's shell tool running $MOCK_COMMAND; the answer to the tool's
// result is a final message quoting that result (`MOCK-DONE: …`). Requests without a shell tool
// (titles, summaries) get a short text. Every request is logged on stderr (`mock: …`).
//
// Usage: node mock-anthropic.js PORT READY_FILE (written once it listens).
import * as fs from 'node:fs';
import * as http from 'node:http';

interface Block {
  type: string;
  text?: string;
  content?: string | Block[];
}
interface Message {
  role: string;
  content: string | Block[];
}
interface Tool {
  name: string;
}
interface Request {
  model?: string;
  stream?: boolean;
  tools?: Tool[];
  messages?: Message[];
}

const port = Number(process.argv[2]);
const ready = process.argv[3];
const command = process.env.MOCK_COMMAND ?? 'echo mock';

function text(b: string | Block[] | undefined): string {
  if (b === undefined) return '';
  if (typeof b === 'string') return b;
  return b.map((x) => (x.type === 'text' ? (x.text ?? '') : text(x.content))).join('');
}

/** The answer: content blocks and the stop reason. */
function answer(req: Request): { content: Record<string, unknown>[]; stop: string } {
  const last = req.messages?.[req.messages.length - 1];
  const result = Array.isArray(last?.content) ? last?.content.find((b) => b.type === 'tool_result') : undefined;
  if (result) return { content: [{ type: 'text', text: `MOCK-DONE: ${text(result.content).trim()}` }], stop: 'end_turn' };
  const shell = req.tools?.find((t) => /^bash$/i.test(t.name));
  if (!shell) return { content: [{ type: 'text', text: 'Mock title' }], stop: 'end_turn' };
  return {
    content: [{ type: 'tool_use', id: `toolu_mock_${Date.now()}`, name: shell.name, input: { command, description: 'Run the mock command' } }],
    stop: 'tool_use',
  };
}

function sse(res: http.ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function messages(req: Request, res: http.ServerResponse): void {
  const { content, stop } = answer(req);
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const id = `msg_mock_${Date.now()}`;
  const model = req.model ?? 'mock';
  if (!req.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model, content, stop_reason: stop, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  sse(res, 'message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  content.forEach((block, index) => {
    if (block.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } });
      sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    const url = (req.url ?? '').split('?')[0];
    let parsed: Request = {};
    try {
      parsed = body ? (JSON.parse(body) as Request) : {};
    } catch {
      /* not JSON */
    }
    process.stderr.write(`mock: ${req.method} ${req.url} tools=${(parsed.tools ?? []).length} messages=${(parsed.messages ?? []).length}\n`);
    if (req.method === 'POST' && url.endsWith('/messages/count_tokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 10 }));
    } else if (req.method === 'POST' && url.endsWith('/messages')) {
      messages(parsed, res);
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `mock: no ${req.method} ${url}` } }));
    }
  });
});
server.listen(port, '127.0.0.1', () => fs.writeFileSync(ready, 'ready\n'));
