// A fake of the paid model APIs on 127.0.0.1, speaking each vendor's real wire protocol: Anthropic Messages
// (streamed tool use), OpenAI Responses (streamed), OpenAI Chat Completions and Gemini generateContent. Its script
// solves examples/hello: the first answer runs the shell command that writes hello.txt, the next one finishes (a
// test may put a call of another tool, an MCP server's, before the command).
// It checks the key on every request (401 for any other), records what it reported, and can answer the
// first agent call with a 429.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const WRITE_HELLO = "echo 'Hello, world!' > hello.txt";
/** How the probe the gateway sends before a batch reads. */
const PROBE_TEXT = 'Reply with the single word OK.';

export interface Reported {
  path: string;
  /** In Berth's terms: every input token (cached included), cached ones, output. */
  input: number;
  cached: number;
  output: number;
  probe: boolean;
}

export interface FakeVendors {
  url: string;
  /** Every answer with its usage, in order. */
  reported: Reported[];
  /** Requests answered 429 or 401. */
  refused: Array<{ path: string; status: number }>;
  /** Keys seen (Authorization bearer or x-api-key). */
  keysSeen: Set<string>;
  /** Answer the next agent (non-probe) call with 429 once. */
  rateLimitNext(): void;
  /** Called before the finishing answer (the agent already ran its command): e.g. look inside the sandbox. */
  beforeFinish?: () => Promise<void>;
  /** The shell command the first answer runs (default WRITE_HELLO). */
  command?: string;
  /** A tool (an MCP server's, as the agent names it) called once before the command. */
  firstTool?: string;
  /** The names the first tool was called by, in order. */
  firstToolCalls: string[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function keyOf(h: IncomingHttpHeaders): string {
  const auth = h['authorization'];
  if (typeof auth === 'string') return auth.replace(/^Bearer\s+/i, '');
  for (const k of [h['x-api-key'], h['x-goog-api-key']]) if (typeof k === 'string') return k;
  return '';
}

function isProbe(body: Json): boolean {
  return JSON.stringify(body).includes(PROBE_TEXT);
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

function sse(res: ServerResponse, events: Array<{ event?: string; data: unknown }>, done = false): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${JSON.stringify(e.data)}\n\n`);
  res.end(done ? 'data: [DONE]\n\n' : '');
}

// Anthropic: input_tokens excludes cache reads; Berth counts input = 100 + 7 + 3.
const ANTHROPIC_USAGE = { input_tokens: 100, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 };

function anthropic(res: ServerResponse, body: Json, n: number, move: Move): Omit<Reported, 'path' | 'probe'> {
  const call = move(((body['tools'] as Json[] | undefined) ?? []).map((t) => String(t['name'])), toolResults(body));
  const output = call ? 20 : 5;
  const reported = { input: 110, cached: 7, output };
  if (body['stream'] !== true) {
    json(res, 200, {
      id: `msg_${n}`, type: 'message', role: 'assistant', model: body['model'], content: [{ type: 'text', text: 'OK' }],
      stop_reason: 'end_turn', stop_sequence: null, usage: { ...ANTHROPIC_USAGE, output_tokens: output },
    });
    return reported;
  }
  const block = call
    ? [
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_${n}`, name: call.name, input: {} } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } } },
      ]
    : [
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello.txt is written.' } } },
      ];
  sse(res, [
    { event: 'message_start', data: { type: 'message_start', message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: body['model'], content: [], stop_reason: null, stop_sequence: null, usage: { ...ANTHROPIC_USAGE, output_tokens: 1 } } } },
    ...block,
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: output } } },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]);
  return reported;
}

/** Anthropic: the tool results the conversation holds so far. */
function toolResults(body: Json): number {
  const messages = (body['messages'] as Json[] | undefined) ?? [];
  return messages.flatMap((m) => (Array.isArray(m['content']) ? (m['content'] as Json[]) : [])).filter((c) => c['type'] === 'tool_result').length;
}

function responses(res: ServerResponse, body: Json, n: number, command: string): Omit<Reported, 'path' | 'probe'> {
  const input = Array.isArray(body['input']) ? (body['input'] as Json[]) : [];
  const answered = input.some((i) => i['type'] === 'function_call_output');
  const tools = (body['tools'] as Json[] | undefined) ?? [];
  const tool = tools.find((t) => ['exec_command', 'shell_command', 'shell'].includes(String(t['name'])));
  const output = answered ? 6 : 15;
  // As the Responses API reports it, total_tokens included: codex refuses a response.completed without it (it
  // reconnects, up to five times, and asks again).
  const usage = { input_tokens: 120, input_tokens_details: { cached_tokens: 20 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 + output };
  const reported = { input: 120, cached: 20, output: usage.output_tokens };
  const id = `resp_${n}`;
  if (body['stream'] !== true) {
    json(res, 200, { id, object: 'response', status: 'completed', model: body['model'], output: [{ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'OK', annotations: [] }] }], usage });
    return reported;
  }
  const name = String(tool?.['name'] ?? 'shell');
  const args = name === 'exec_command' ? { cmd: command } : name === 'shell' ? { command: ['bash', '-lc', command] } : { command };
  const item = !answered && tool
    ? { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name, arguments: JSON.stringify(args), status: 'completed' }
    : { type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'hello.txt is written.', annotations: [] }] };
  sse(res, [
    { event: 'response.created', data: { type: 'response.created', response: { id, status: 'in_progress', model: body['model'] } } },
    { event: 'response.output_item.added', data: { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } } },
    ...(item.type === 'message' ? [{ event: 'response.output_text.delta', data: { type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: item.id, delta: 'hello.txt is written.' } }] : []),
    { event: 'response.output_item.done', data: { type: 'response.output_item.done', output_index: 0, item } },
    { event: 'response.completed', data: { type: 'response.completed', response: { id, status: 'completed', model: body['model'], usage } } },
  ]);
  return reported;
}

/** Each agent's shell tool, by the name it gives it; the first the request offers is the one called. */
const SHELL_TOOLS = ['Bash', 'bash', 'run_shell_command', 'run_commands', 'execute_command', 'shell', 'exec_command', 'run_command', 'terminal'];

/** The shell tool's arguments in its own schema (cline's run_commands takes a list and nothing else). */
function shellArgs(tool: string, command: string): Json {
  if (tool === 'run_commands') return { commands: [command] };
  // OpenHands' terminal tool forbids other keys; it asks for a risk rating beside the command.
  if (tool === 'terminal') return { command, security_risk: 'LOW' };
  return { command, description: 'write the greeting', ...(tool === 'execute_command' ? { requires_approval: false } : {}) };
}

/** The next tool call of the script, given the tools offered and how many results the conversation holds (null: answer). */
type Move = (offered: string[], ran: number) => { name: string; args: Json } | null;

/**
 * The script every protocol follows: the first tool once (when the test asks for one and the agent offers it), then
 * the shell command, then a plain answer. mini-swe-agent's one tool is bash, and it ends when a command prints its
 * submit marker.
 */
function scriptedMove(fake: FakeVendors, command: string): Move {
  return (offered, ran) => {
    const shell = SHELL_TOOLS.find((t) => offered.includes(t));
    const first = firstToolOf(fake.firstTool, offered);
    const onlyBash = offered.length === 1 && offered[0] === 'bash';
    const script = [
      // OpenHands (the agent whose shell tool is `terminal`) refuses any tool call without a risk rating.
      ...(first ? [{ name: first, args: offered.includes('terminal') ? { security_risk: 'LOW' } : {} }] : []),
      ...(shell ? [{ name: shell, args: shellArgs(shell, command) }] : []),
      ...(onlyBash ? [{ name: 'bash', args: shellArgs('bash', 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT') }] : []),
    ];
    const next = script[ran] ?? null;
    if (next && next.name === first) fake.firstToolCalls.push(first);
    return next;
  };
}

/**
 * The first tool's name as this request offers it. Claude Code and qwen-code defer MCP tools behind a search tool
 * (ToolSearch, tool_search) and take a direct call by the tool's own name all the same.
 */
function firstToolOf(want: string | undefined, offered: string[]): string | undefined {
  if (want === undefined) return undefined;
  return offered.includes(want) || offered.includes('ToolSearch') || offered.includes('tool_search') ? want : undefined;
}

function toolNames(body: Json): string[] {
  return ((body['tools'] as Json[] | undefined) ?? []).map((t) => String(obj(t['function'])['name'] ?? t['name'] ?? ''));
}

const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

function chat(res: ServerResponse, body: Json, n: number, move: Move): Omit<Reported, 'path' | 'probe'> {
  const messages = (body['messages'] as Json[] | undefined) ?? [];
  const ran = messages.filter((m) => m['role'] === 'tool').length;
  const usage = { prompt_tokens: 50 + 10 * ran, completion_tokens: 10, total_tokens: 60 + 10 * ran, prompt_tokens_details: { cached_tokens: 5 } };
  const names = toolNames(body);
  const shell = SHELL_TOOLS.some((t) => names.includes(t));
  const next = move(names, ran);
  const call = next ? { id: `call_${n}`, type: 'function', function: { name: next.name, arguments: JSON.stringify(next.args) } } : null;
  // An agent that edits files from the answer's text instead of calling tools (aider, whole-file format) gets the
  // file's listing: its name on a line, then its content fenced.
  const asksForHello = !shell && messages.some((m) => m['role'] === 'user' && JSON.stringify(m['content']).includes('hello.txt'));
  const text = call ? (ran === 0 ? 'Writing the greeting.' : 'Done: submitting.') : shell ? 'hello.txt is written.'
    : asksForHello ? 'Writing the greeting.\n\nhello.txt\n```\nHello, world!\n```\n' : 'OK';
  const reported = { input: usage.prompt_tokens, cached: 5, output: 10 };
  if (body['stream'] === true) {
    const base = { id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body['model'] };
    const include = (body['stream_options'] as Json | undefined)?.['include_usage'] === true;
    sse(res, [
      { data: { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }] } },
      ...(call ? [{ data: { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, ...call }] }, finish_reason: null }] } }] : []),
      { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: call ? 'tool_calls' : 'stop' }] } },
      ...(include ? [{ data: { ...base, choices: [], usage } }] : []),
    ], true);
    return reported;
  }
  const message = call ? { role: 'assistant', content: text, tool_calls: [call] } : { role: 'assistant', content: text };
  json(res, 200, {
    id: `chatcmpl-${n}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: body['model'],
    choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }], usage,
  });
  return reported;
}

/** Gemini's generateContent / streamGenerateContent (alt=sse): a functionCall of the shell tool, then a text answer. */
function gemini(res: ServerResponse, body: Json, n: number, streamed: boolean, move: Move): Omit<Reported, 'path' | 'probe'> {
  const contents = (body['contents'] as Json[] | undefined) ?? [];
  const parts = contents.flatMap((c) => ((c['parts'] as Json[] | undefined) ?? []));
  const ran = parts.filter((p) => p['functionResponse'] !== undefined).length;
  const names = ((body['tools'] as Json[] | undefined) ?? []).flatMap((t) => ((t['functionDeclarations'] as Json[] | undefined) ?? []).map((f) => String(f['name'])));
  const shell = SHELL_TOOLS.some((t) => names.includes(t));
  const next = move(names, ran);
  const call = next ? { functionCall: { name: next.name, args: next.args } } : null;
  const usageMetadata = { promptTokenCount: 90 + 10 * ran, cachedContentTokenCount: 30, candidatesTokenCount: call ? 12 : 4, thoughtsTokenCount: 3, totalTokenCount: 0 };
  usageMetadata.totalTokenCount = usageMetadata.promptTokenCount + usageMetadata.candidatesTokenCount + usageMetadata.thoughtsTokenCount;
  const reported = { input: usageMetadata.promptTokenCount, cached: 30, output: usageMetadata.candidatesTokenCount + 3 };
  const final = (content: Json[]) => ({ candidates: [{ content: { role: 'model', parts: content }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: String(n), responseId: `gem-${n}` });
  const answer = call ? [call] : [{ text: shell ? 'hello.txt is written.' : 'OK' }];
  if (!streamed) {
    json(res, 200, final(answer));
    return reported;
  }
  sse(res, [
    { data: { candidates: [{ content: { role: 'model', parts: [{ text: call ? 'Writing the greeting.' : '' }] }, index: 0 }], usageMetadata: { ...usageMetadata, candidatesTokenCount: 1, thoughtsTokenCount: 0 }, responseId: `gem-${n}` } },
    { data: final(answer) },
  ]);
  return reported;
}

/** `key` is the only key accepted. */
export async function startFakeVendors(key: string): Promise<FakeVendors> {
  let n = 0;
  let limitNext = false;
  const fake: FakeVendors = {
    url: '', reported: [], refused: [], keysSeen: new Set(), firstToolCalls: [],
    rateLimitNext: () => { limitNext = true; },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      let body: Json = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      } catch {
        body = {};
      }
      const path = (req.url ?? '').split('?')[0]!;
      const seen = keyOf(req.headers);
      fake.keysSeen.add(seen);
      if (seen !== key) {
        fake.refused.push({ path, status: 401 });
        return json(res, 401, path.startsWith('/v1/messages')
          ? { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }
          : { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
      }
      const probe = isProbe(body);
      if (!probe && limitNext) {
        limitNext = false;
        fake.refused.push({ path, status: 429 });
        return json(res, 429, { error: { message: 'Rate limit reached', type: 'rate_limit_error' } }, { 'retry-after': '0' });
      }
      // An agent without tools (aider) makes one call, which is also its last.
      const toolless = !Array.isArray(body['tools']) && JSON.stringify(body['messages'] ?? []).includes('hello.txt');
      const finishing = !probe && (JSON.stringify(body).includes('tool_result') || JSON.stringify(body).includes('function_call_output') ||
        JSON.stringify(body).includes('functionResponse') || toolless ||
        ((body['messages'] as Json[] | undefined) ?? []).some((m) => m['role'] === 'tool'));
      if (finishing && fake.beforeFinish) await fake.beforeFinish();
      n++;
      let r: Omit<Reported, 'path' | 'probe'>;
      const command = fake.command ?? WRITE_HELLO;
      const move = scriptedMove(fake, command);
      if (path === '/v1/messages') r = anthropic(res, body, n, move);
      else if (path === '/v1/responses') r = responses(res, body, n, command);
      else if (path === '/v1/chat/completions') r = chat(res, body, n, move);
      else if (/^\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path)) r = gemini(res, body, n, path.endsWith(':streamGenerateContent'), move);
      else return json(res, 404, { error: { message: `no route ${path}`, type: 'not_found' } });
      fake.reported.push({ path, probe, ...r });
    })().catch((err: unknown) => {
      if (!res.headersSent) json(res, 500, { error: { message: String(err) } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** What the fake reported to the agent (not the probe), in the row's terms. */
export function reportedUsage(fake: FakeVendors, from = 0): { promptTokens: number; completionTokens: number; cachedTokens: number; calls: number } {
  const calls = fake.reported.slice(from).filter((r) => !r.probe);
  return {
    promptTokens: calls.reduce((s, r) => s + r.input, 0),
    completionTokens: calls.reduce((s, r) => s + r.output, 0),
    cachedTokens: calls.reduce((s, r) => s + r.cached, 0),
    calls: calls.length,
  };
}
