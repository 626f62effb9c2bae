// A stand-in for OpenAI's Responses API (POST /v1/responses, streamed as server-sent events), for
// Codex. It runs inside the confined command's network namespace, so nothing leaves the machine.
// The first answer is one call of the shell tool Codex offers (exec_command, shell_command or
// shell, whichever the request lists) running $MOCK_COMMAND; the answer to its output is a final
// message quoting it (`MOCK-DONE: …`). Every request is logged on stderr (`mock: …`).
//
// Usage: node mock-openai.js PORT READY_FILE (written once it listens).
import * as fs from 'node:fs';
import * as http from 'node:http';

interface Item {
  type?: string;
  output?: unknown;
}
interface Tool {
  type: string;
  name?: string;
}
interface Request {
  model?: string;
  tools?: Tool[];
  input?: Item[];
}

const port = Number(process.argv[2]);
const ready = process.argv[3];
const command = process.env.MOCK_COMMAND ?? 'echo mock';

function outputText(o: unknown): string {
  if (typeof o === 'string') return o;
  if (Array.isArray(o)) return o.map((x) => (typeof x === 'object' && x && 'text' in x ? String((x as { text: unknown }).text) : '')).join('');
  if (o && typeof o === 'object' && 'content' in o) return outputText((o as { content: unknown }).content);
  return JSON.stringify(o);
}

/** The output item: a function call to the shell tool, or the final message. */
function answer(req: Request): Record<string, unknown> {
  const input = req.input ?? [];
  const result = [...input].reverse().find((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
  if (result) {
    return { type: 'message', role: 'assistant', id: 'msg_mock_2', status: 'completed', content: [{ type: 'output_text', text: `MOCK-DONE: ${outputText(result.output).trim()}`, annotations: [] }] };
  }
  const names = (req.tools ?? []).map((t) => t.name ?? t.type);
  const call = (name: string, args: unknown) => ({ type: 'function_call', id: 'fc_mock_1', call_id: 'call_mock_1', status: 'completed', name, arguments: JSON.stringify(args) });
  if (names.includes('exec_command')) return call('exec_command', { cmd: command });
  if (names.includes('shell_command')) return call('shell_command', { command });
  if (names.includes('shell')) return call('shell', { command: ['bash', '-lc', command] });
  return { type: 'message', role: 'assistant', id: 'msg_mock_t', status: 'completed', content: [{ type: 'output_text', text: 'Mock title', annotations: [] }] };
}

function sse(res: http.ServerResponse, data: { type: string } & Record<string, unknown>): void {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
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
    const tools = (parsed.tools ?? []).map((t) => t.name ?? t.type).join(',');
    process.stderr.write(`mock: ${req.method} ${req.url} tools=${tools} input=${(parsed.input ?? []).length}\n`);
    if (req.method === 'POST' && url.endsWith('/responses')) {
      const item = answer(parsed);
      const response = { id: 'resp_mock', object: 'response', created_at: Math.floor(Date.now() / 1000), model: parsed.model ?? 'mock', status: 'in_progress', output: [] as unknown[] };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      sse(res, { type: 'response.created', response });
      sse(res, { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } });
      if (item.type === 'message') {
        const t = (item.content as { text: string }[])[0].text;
        sse(res, { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: t });
      }
      sse(res, { type: 'response.output_item.done', output_index: 0, item });
      const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
      sse(res, { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage } });
      res.end();
    } else if (req.method === 'GET' && url.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `mock: no ${req.method} ${url}`, type: 'not_found' } }));
    }
  });
});
server.listen(port, '127.0.0.1', () => fs.writeFileSync(ready, 'ready\n'));
