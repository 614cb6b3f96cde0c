// Scripted agents for each dialect the gateway speaks: the requests claude-code (Anthropic Messages), codex (OpenAI
// Responses), gemini-cli (Gemini generateContent) and Chat Completions clients send, a first call with a tool and a
// second carrying the tool's result; and readers of each dialect's answer, whole or streamed.
import type { Dialect } from '../../src/tokens/index.ts';

type Json = Record<string, unknown>;
export interface ToolUse { id: string; name: string; args: Json }
export interface Turn { text: string; calls: ToolUse[] }

const SCHEMA = { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] };
export const SYSTEM = 'You are a careful agent.';

export function pathOf(dialect: Dialect, stream: boolean, model = 'agent-model'): string {
  if (dialect === 'anthropic-messages') return '/v1/messages';
  if (dialect === 'openai-responses') return '/v1/responses';
  if (dialect === 'gemini-generate') return `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
  return '/v1/chat/completions';
}

export function headersOf(dialect: Dialect, token: string): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (dialect === 'anthropic-messages') { h['x-api-key'] = token; h['anthropic-version'] = '2023-06-01'; }
  else if (dialect === 'gemini-generate') h['x-goog-api-key'] = token;
  else h['authorization'] = `Bearer ${token}`;
  return h;
}

/** The conversation so far in the dialect: the user's task, then each earlier turn and its tool results. */
export function requestOf(dialect: Dialect, stream: boolean, user: string, history: Array<{ turn: Turn; results: string[] }>): Json {
  if (dialect === 'anthropic-messages') {
    const messages: Json[] = [{ role: 'user', content: user }];
    for (const h of history) {
      messages.push({ role: 'assistant', content: [...(h.turn.text ? [{ type: 'text', text: h.turn.text }] : []), ...h.turn.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.args }))] });
      messages.push({ role: 'user', content: h.turn.calls.map((c, i) => ({ type: 'tool_result', tool_use_id: c.id, content: h.results[i] })) });
    }
    return { model: 'agent-model', max_tokens: 256, stream, system: [{ type: 'text', text: SYSTEM }], tools: [{ name: 'bash', description: 'Run a command', input_schema: SCHEMA }], messages };
  }
  if (dialect === 'openai-responses') {
    const input: Json[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: user }] }];
    for (const h of history) {
      if (h.turn.text) input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: h.turn.text }] });
      h.turn.calls.forEach((c, i) => {
        input.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.args) });
        input.push({ type: 'function_call_output', call_id: c.id, output: h.results[i] });
      });
    }
    return { model: 'agent-model', stream, instructions: SYSTEM, tools: [{ type: 'function', name: 'bash', description: 'Run a command', parameters: SCHEMA }], input };
  }
  if (dialect === 'gemini-generate') {
    const contents: Json[] = [{ role: 'user', parts: [{ text: user }] }];
    for (const h of history) {
      contents.push({ role: 'model', parts: [...(h.turn.text ? [{ text: h.turn.text }] : []), ...h.turn.calls.map((c) => ({ functionCall: { name: c.name, args: c.args } }))] });
      contents.push({ role: 'user', parts: h.turn.calls.map((c, i) => ({ functionResponse: { name: c.name, response: { output: h.results[i] } } })) });
    }
    return { systemInstruction: { parts: [{ text: SYSTEM }] }, tools: [{ functionDeclarations: [{ name: 'bash', description: 'Run a command', parameters: SCHEMA }] }], contents };
  }
  const messages: Json[] = [{ role: 'system', content: SYSTEM }, { role: 'user', content: user }];
  for (const h of history) {
    messages.push({ role: 'assistant', content: h.turn.text || null, tool_calls: h.turn.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })) });
    h.turn.calls.forEach((c, i) => messages.push({ role: 'tool', tool_call_id: c.id, content: h.results[i] }));
  }
  return { model: 'agent-model', stream, messages, tools: [{ type: 'function', function: { name: 'bash', description: 'Run a command', parameters: SCHEMA } }] };
}

const dataLines = (body: string): Json[] =>
  body.split('\n').filter((l) => l.startsWith('data:') && l.slice(5).trim() !== '[DONE]').map((l) => JSON.parse(l.slice(5)) as Json);

/** The assistant's text and tool calls from the dialect's answer, as the agent reads it. */
export function turnOf(dialect: Dialect, stream: boolean, body: string): Turn {
  if (dialect === 'anthropic-messages') {
    let blocks: Json[];
    if (!stream) blocks = (JSON.parse(body) as Json)['content'] as Json[];
    else {
      blocks = [];
      for (const e of dataLines(body)) {
        if (e['type'] === 'content_block_start') blocks[e['index'] as number] = { ...(e['content_block'] as Json), _json: '' };
        if (e['type'] === 'content_block_delta') {
          const b = blocks[e['index'] as number]!;
          const d = e['delta'] as Json;
          if (d['type'] === 'text_delta') b['text'] = String(b['text'] ?? '') + String(d['text']);
          else b['_json'] = String(b['_json']) + String(d['partial_json']);
        }
      }
      for (const b of blocks) if (b['type'] === 'tool_use') b['input'] = JSON.parse(String(b['_json']) || '{}');
    }
    return {
      text: blocks.filter((b) => b['type'] === 'text').map((b) => String(b['text'])).join(''),
      calls: blocks.filter((b) => b['type'] === 'tool_use').map((b) => ({ id: String(b['id']), name: String(b['name']), args: b['input'] as Json })),
    };
  }
  if (dialect === 'openai-responses') {
    const response = stream ? (dataLines(body).find((e) => e['type'] === 'response.completed')!['response'] as Json) : (JSON.parse(body) as Json);
    const output = response['output'] as Json[];
    return {
      text: output.filter((o) => o['type'] === 'message').map((o) => String(((o['content'] as Json[])[0]!)['text'])).join(''),
      calls: output.filter((o) => o['type'] === 'function_call').map((o) => ({ id: String(o['call_id']), name: String(o['name']), args: JSON.parse(String(o['arguments'])) as Json })),
    };
  }
  if (dialect === 'gemini-generate') {
    const chunks = stream ? dataLines(body) : [JSON.parse(body) as Json];
    const parts = chunks.flatMap((c) => (((c['candidates'] as Json[])[0]!['content'] as Json)['parts'] as Json[]));
    return {
      text: parts.filter((p) => typeof p['text'] === 'string').map((p) => String(p['text'])).join(''),
      calls: parts.filter((p) => p['functionCall']).map((p, i) => ({ id: `g${i}`, name: String((p['functionCall'] as Json)['name']), args: (p['functionCall'] as Json)['args'] as Json })),
    };
  }
  if (!stream) {
    const m = ((JSON.parse(body) as Json)['choices'] as Json[])[0]!['message'] as Json;
    return {
      text: String(m['content'] ?? ''),
      calls: ((m['tool_calls'] ?? []) as Json[]).map((t) => ({ id: String(t['id']), name: String((t['function'] as Json)['name']), args: JSON.parse(String((t['function'] as Json)['arguments'])) as Json })),
    };
  }
  let text = '';
  const calls: Array<{ id: string; name: string; args: string }> = [];
  for (const c of dataLines(body)) {
    const delta = (((c['choices'] as Json[])[0] ?? {})['delta'] ?? {}) as Json;
    if (typeof delta['content'] === 'string') text += delta['content'];
    for (const t of (delta['tool_calls'] ?? []) as Json[]) {
      const i = t['index'] as number;
      const f = (t['function'] ?? {}) as Json;
      calls[i] ??= { id: String(t['id']), name: String(f['name'] ?? ''), args: '' };
      calls[i].args += String(f['arguments'] ?? '');
    }
  }
  return { text, calls: calls.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.args) as Json })) };
}

export const DIALECTS: readonly Dialect[] = ['openai-chat', 'anthropic-messages', 'openai-responses', 'gemini-generate'];
