// A fake policy engine: a real HTTP server speaking vLLM's OpenAI-compatible Chat Completions, as a trainer's vLLM
// serves it with `--logprobs-mode processed_logprobs` (or raw). Deterministic: the prompt is a ChatML rendering of
// the messages (and tools) tokenised with a real BPE tokenizer (gpt-tokenizer, o200k_base); the reply comes from the
// test's script; each generated token's logprob is a log-softmax over a few fixed candidates, divided by the
// temperature first in processed mode (raw mode ignores the temperature, as vLLM's raw_logprobs do).
//
// Each message is tokenised piece by piece between special tokens, so a reply's tokens re-render to the same tokens
// when the next request echoes it: the next prompt extends this prompt plus completion exactly, as a chat template
// with special-token boundaries does on a real engine.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decode, encode, ImEnd, ImStart } from 'gpt-tokenizer/encoding/o200k_base';

type Json = Record<string, unknown>;

export interface ScriptedToolCall {
  name: string;
  arguments: Json;
}

export interface ScriptedReply {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: tool_calls when it calls tools, else stop. */
  finishReason?: string;
}

export interface SeenRequest {
  body: Json;
  /** The policy version that served it. */
  version: string;
  promptTokenIds: number[];
  /** What it generated (the reply's tokens and the end token) and each token's logprob, as answered. */
  generationTokenIds: number[];
  logprobs: number[];
}

export interface FakePolicyOptions {
  model?: string;
  version?: string;
  logprobsMode?: 'processed' | 'raw';
  /** False: answers without prompt_token_ids / token_ids (an engine too old for return_token_ids). */
  tokenIds?: boolean;
  /** The reply to each request; `call` counts requests from 0. */
  script?: (request: { messages: Json[]; tools: Json[]; call: number }) => ScriptedReply;
  /** Milliseconds before each answer. */
  delayMs?: number;
}

const IM_START = encode(ImStart, { allowedSpecial: new Set([ImStart]) })[0]!;
const IM_END = encode(ImEnd, { allowedSpecial: new Set([ImEnd]) })[0]!;
const NEWLINE = encode('\n');

const text = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) ? v.map((p) => String((p as Json)['text'] ?? '')).join('') : '');

/** What a reply's text is, in the template: its content, then each tool call as <tool_call>{json}</tool_call>. */
function replyPieces(content: string, calls: Array<{ name: string; arguments: unknown }>): string[] {
  return [content, ...calls.map((c) => `<tool_call>${JSON.stringify({ name: c.name, arguments: c.arguments })}</tool_call>`)];
}

function argsOf(raw: unknown): unknown {
  try {
    return JSON.parse(String(raw)) as unknown;
  } catch {
    return String(raw);
  }
}

/** ChatML, one message at a time; an assistant message's tool calls render as the engine generated them. */
export function renderPrompt(messages: Json[], tools: Json[]): number[] {
  const out: number[] = [];
  const block = (role: string, pieces: string[]): void => {
    out.push(IM_START, ...encode(`${role}\n`));
    for (const p of pieces) out.push(...encode(p));
    out.push(IM_END, ...NEWLINE);
  };
  if (tools.length) block('system', [`# Tools\n${JSON.stringify(tools)}`]);
  for (const m of messages) {
    const role = String(m['role']);
    if (role === 'assistant') {
      const calls = (Array.isArray(m['tool_calls']) ? m['tool_calls'] as Json[] : []).map((t) => {
        const f = (t['function'] ?? {}) as Json;
        return { name: String(f['name']), arguments: argsOf(f['arguments']) };
      });
      block('assistant', replyPieces(text(m['content']), calls));
    } else {
      block(role, [text(m['content'])]);
    }
  }
  out.push(IM_START, ...encode('assistant\n'));
  return out;
}

/** The log-probability of token `t` among its fixed candidates (t, t+1, t+2) at `temperature`. */
export function fakeLogprob(t: number, temperature: number): number {
  const logits = [2 + (t % 5) * 0.25, 1, 0.25];
  const scaled = logits.map((l) => l / temperature);
  const max = Math.max(...scaled);
  const z = Math.log(scaled.reduce((s, l) => s + Math.exp(l - max), 0)) + max;
  return scaled[0]! - z;
}

export class FakePolicy {
  readonly seen: SeenRequest[] = [];
  version: string;
  logprobsMode: 'processed' | 'raw';
  readonly model: string;
  private server: Server | undefined;
  url = '';

  constructor(private readonly opts: FakePolicyOptions = {}) {
    this.version = opts.version ?? 'v0';
    this.logprobsMode = opts.logprobsMode ?? 'processed';
    this.model = opts.model ?? 'policy-model';
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => { void this.handle(req, res); });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, body: unknown): void => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    if (req.url === '/v1/models') return send(200, { object: 'list', data: [{ id: this.model, object: 'model' }] });
    if (req.url !== '/v1/chat/completions' || req.method !== 'POST') return send(404, { error: { message: 'Not Found', type: 'NotFoundError', code: 404 } });
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
    if (body['model'] !== this.model) return send(404, { error: { message: `The model \`${String(body['model'])}\` does not exist.`, type: 'NotFoundError', code: 404 } });
    const messages = (body['messages'] ?? []) as Json[];
    const tools = (body['tools'] ?? []) as Json[];
    const prompt = renderPrompt(messages, tools);
    const version = this.version;
    const call = this.seen.length;
    const seen: SeenRequest = { body, version, promptTokenIds: prompt, generationTokenIds: [], logprobs: [] };
    this.seen.push(seen);
    const reply = this.opts.script?.({ messages, tools, call }) ?? { content: `reply ${call}` };
    const calls = (reply.toolCalls ?? []).map((t, i) => ({ id: `call_${call}_${i}`, name: t.name, arguments: t.arguments }));
    const generation = [...replyPieces(reply.content ?? '', calls).flatMap((p) => encode(p)), IM_END];
    const temperature = typeof body['temperature'] === 'number' ? body['temperature'] : 1;
    const t = this.logprobsMode === 'raw' || temperature <= 0 ? 1 : temperature;
    const top = typeof body['top_logprobs'] === 'number' ? body['top_logprobs'] : 0;
    const logprobs = generation.map((id) => ({
      token: id === IM_END ? ImEnd : decode([id]), logprob: fakeLogprob(id, t), bytes: null,
      top_logprobs: [0, 1, 2].slice(0, top).map((k) => ({ token: `token_id:${id + k}`, logprob: k === 0 ? fakeLogprob(id, t) : Math.log(1e-3 * k) / t, bytes: null })),
    }));
    seen.generationTokenIds = generation;
    seen.logprobs = logprobs.map((l) => l.logprob);
    const withIds = this.opts.tokenIds !== false && body['return_token_ids'] === true;
    const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
    const finish = reply.finishReason ?? (calls.length ? 'tool_calls' : 'stop');
    const id = `chatcmpl-fake${call}`;
    const usage = { prompt_tokens: prompt.length, completion_tokens: generation.length, total_tokens: prompt.length + generation.length };
    if (this.opts.delayMs) await new Promise((r) => setTimeout(r, this.opts.delayMs));
    if (body['stream'] === true) return this.stream(res, { id, prompt, generation, logprobs, content: reply.content ?? '', toolCalls, finish, usage, withIds, wantLogprobs: body['logprobs'] === true, includeUsage: ((body['stream_options'] ?? {}) as Json)['include_usage'] === true });
    send(200, {
      id, object: 'chat.completion', created: 1, model: this.model,
      ...(withIds ? { prompt_token_ids: prompt } : {}),
      choices: [{
        index: 0, message: { role: 'assistant', content: reply.content ?? (toolCalls.length ? null : ''), ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        logprobs: body['logprobs'] === true ? { content: logprobs } : null, finish_reason: finish, stop_reason: null,
        ...(withIds ? { token_ids: generation } : {}),
      }],
      usage,
    });
  }

  /** vLLM's stream: the first chunk carries prompt_token_ids, each later one its tokens' ids and logprobs. */
  private stream(res: ServerResponse, a: {
    id: string; prompt: number[]; generation: number[]; logprobs: Json[]; content: string; toolCalls: Json[]; finish: string;
    usage: Json; withIds: boolean; wantLogprobs: boolean; includeUsage: boolean;
  }): void {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (choice: Json, extra: Json = {}): void => {
      res.write(`data: ${JSON.stringify({ id: a.id, object: 'chat.completion.chunk', created: 1, model: this.model, choices: [{ index: 0, logprobs: null, finish_reason: null, ...choice }], ...extra })}\n\n`);
    };
    chunk({ delta: { role: 'assistant', content: '' } }, a.withIds ? { prompt_token_ids: a.prompt } : {});
    // One chunk per generated token: text tokens carry content, the rest (tool calls, the end token) ids alone.
    const contentTokens = encode(a.content).length;
    a.generation.forEach((id, i) => {
      const delta: Json = i < contentTokens ? { content: decode([id]) } : {};
      if (i === contentTokens && a.toolCalls.length) delta['tool_calls'] = a.toolCalls.map((t, index) => ({ index, ...t }));
      chunk({ delta, ...(a.wantLogprobs ? { logprobs: { content: [a.logprobs[i]] } } : {}), ...(a.withIds ? { token_ids: [id] } : {}), ...(i === a.generation.length - 1 ? { finish_reason: a.finish } : {}) });
    });
    if (a.includeUsage) res.write(`data: ${JSON.stringify({ id: a.id, object: 'chat.completion.chunk', created: 1, model: this.model, choices: [], usage: a.usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }
}
