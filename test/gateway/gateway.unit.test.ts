// The model gateway against a real HTTP upstream on 127.0.0.1 speaking each vendor's wire format: tokens,
// key injection, streaming passed through as it arrives, usage and cost per call, retries, limits.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyProbe, costOf, ModelGateway, normaliseBase, splitModel, usageOfBody, type CallRecord, type Upstream } from '../../src/gateway/index.ts';

const KEY = 'sk-real-upstream-key-91c2';

interface Seen { path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }

let upstream: ReturnType<typeof createServer>;
let upstreamUrl = '';
const seen: Seen[] = [];
let handler: (req: IncomingMessage, body: Record<string, unknown>, res: ServerResponse) => void | Promise<void> = () => undefined;
let gateway: ModelGateway;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      await handler(req, body, res);
    })();
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gateway = new ModelGateway({ host: '127.0.0.1', retry: { baseDelayMs: 5 } });
  await gateway.start();
});
afterAll(async () => {
  await gateway.stop();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

const up = (provider: 'anthropic' | 'openai' | 'google'): Upstream => ({ provider, baseUrl: upstreamUrl, apiKey: KEY });

function scope(opts: Partial<Parameters<ModelGateway['register']>[0]> = {}) {
  const calls: CallRecord[] = [];
  const s = gateway.register({ label: 'test', upstreams: { anthropic: up('anthropic'), openai: up('openai'), google: up('google') }, prices: {}, onCall: (c) => calls.push(c), ...opts });
  return { s, calls };
}

const sseEvent = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

describe('tokens and keys', () => {
  it('refuses a token it does not know, or one revoked, in the caller\'s wire format, without calling upstream', async () => {
    const before = seen.length;
    const unknown = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'berth-nope' }, body: '{}' });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const { s } = scope();
    gateway.revoke(s.token);
    const revoked = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.token}` }, body: '{}' });
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toMatchObject({ error: { type: 'authentication_error' } });
    expect(seen.length).toBe(before);
  });

  it('puts the real key where each vendor wants it and never forwards the token', async () => {
    handler = (_req, _b, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ usage: {} })); };
    const { s } = scope();
    await fetch(`${gateway.url}/v1/messages?beta=true`, { method: 'POST', headers: { 'x-api-key': s.token, 'anthropic-version': '2023-06-01' }, body: '{"model":"m"}' });
    await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.token}` }, body: '{"model":"m"}' });
    const [a, o] = seen.slice(-2);
    expect(a!.path).toBe('/v1/messages?beta=true');
    expect(a!.headers['x-api-key']).toBe(KEY);
    expect(a!.headers['anthropic-version']).toBe('2023-06-01');
    expect(a!.headers['authorization']).toBeUndefined();
    expect(o!.headers['authorization']).toBe(`Bearer ${KEY}`);
    expect(JSON.stringify([a!.headers, o!.headers])).not.toContain(s.token);
    gateway.revoke(s.token);
  });

  // The egress network's sandboxes reach the gateway on another host address (docs/departures.md, Network).
  it('serves the same tokens on a second address, and stops serving there on stop', async () => {
    handler = (_req, _b, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ usage: {} })); };
    const other = new ModelGateway({ host: '127.0.0.1' });
    await other.start();
    const url = await other.alsoOn('127.0.0.2');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    expect(await other.alsoOn('127.0.0.2')).toBe(url);
    const s = other.register({ label: 'second', upstreams: { openai: up('openai') }, prices: {} });
    for (const base of [other.url, url]) {
      const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.token}` }, body: '{"model":"m"}' });
      expect(r.status).toBe(200);
    }
    expect(s.calls).toHaveLength(2);
    await other.stop();
    expect(await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}' }).then(() => 'answered', () => 'closed')).toBe('closed');
  });
});

describe('usage per call', () => {
  it('passes an Anthropic stream through event by event and counts its usage (cache reads and writes are input)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    handler = async (_req, body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseEvent('message_start', { type: 'message_start', message: { model: body['model'], usage: { input_tokens: 40, cache_read_input_tokens: 8, cache_creation_input_tokens: 2, output_tokens: 1 } } }));
      await gate; // the rest only after the client has read the first event
      res.write(sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 17 } }));
      res.end(sseEvent('message_stop', { type: 'message_stop' }));
    };
    const { s, calls } = scope({ prices: { 'anthropic/claude-x': { input: 3, cached_input: 0.3, output: 15 } } });
    const res = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.token }, body: JSON.stringify({ model: 'claude-x', stream: true }) });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('message_start');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toContain('message_stop');
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]).toMatchObject({ protocol: 'anthropic-messages', model: 'claude-x', status: 200, stream: true, inputTokens: 50, cachedInputTokens: 8, outputTokens: 17, attempts: 1 });
    expect(calls[0]!.costUsd).toBeCloseTo((42 * 3 + 8 * 0.3 + 17 * 15) / 1e6, 10);
    gateway.revoke(s.token);
  });

  it('reads Responses streams, and asks a streamed chat completion for its usage', async () => {
    handler = (req, body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.url === '/v1/responses') {
        res.end(sseEvent('response.completed', { type: 'response.completed', response: { usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 4 }, output_tokens: 9 } } }));
      } else {
        const includeUsage = (body['stream_options'] as { include_usage?: boolean } | undefined)?.include_usage === true;
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'hi' } }] })}\n\n`);
        if (includeUsage) res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 2 } } })}\n\n`);
        res.end('data: [DONE]\n\n');
      }
    };
    const { s, calls } = scope();
    const h = { authorization: `Bearer ${s.token}` };
    await (await fetch(`${gateway.url}/v1/responses`, { method: 'POST', headers: h, body: JSON.stringify({ model: 'gpt-x', stream: true }) })).text();
    await (await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: h, body: JSON.stringify({ model: 'gpt-y', stream: true }) })).text();
    await expect.poll(() => calls.length).toBe(2);
    expect(calls[0]).toMatchObject({ protocol: 'openai-responses', inputTokens: 30, cachedInputTokens: 4, outputTokens: 9, costUsd: null });
    expect(calls[1]).toMatchObject({ protocol: 'openai-chat', model: 'gpt-y', inputTokens: 12, cachedInputTokens: 2, outputTokens: 3 });
    gateway.revoke(s.token);
  });

  it('retries a 429 before answering (Retry-After honoured) and records the attempts', async () => {
    let n = 0;
    handler = (_req, _b, res) => {
      if (n++ === 0) { res.writeHead(429, { 'retry-after': '0', 'content-type': 'application/json' }); res.end('{"error":{"message":"slow down"}}'); return; }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content: 'ok' } }], usage: { prompt_tokens: 5, completion_tokens: 1 } }));
    };
    const { s, calls } = scope();
    const res = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${s.token}` }, body: '{"model":"m"}' });
    expect(res.status).toBe(200);
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]).toMatchObject({ attempts: 2, inputTokens: 5, outputTokens: 1 });
    gateway.revoke(s.token);
  });

  it('a call that passes --max-tokens stops the scope: the next call is refused and the limit is reported once', async () => {
    handler = (_req, _b, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify({ usage: { prompt_tokens: 80, completion_tokens: 30 } })); };
    const limits: string[] = [];
    const { s } = scope({ limits: { maxTokens: 100 }, spentBefore: { tokens: 0, costUsd: 0 }, onLimit: (k) => limits.push(k) });
    const h = { authorization: `Bearer ${s.token}` };
    expect((await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: h, body: '{"model":"m"}' })).status).toBe(200);
    await expect.poll(() => limits).toEqual(['max_tokens']);
    const before = seen.length;
    const refused = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: h, body: '{"model":"m"}' });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain('--max-tokens');
    expect(seen.length).toBe(before);
    expect(s.stopped?.kind).toBe('max_tokens');
    gateway.revoke(s.token);
  });

  it('notes a context-window error from the upstream', async () => {
    handler = (_req, _b, res) => { res.writeHead(400, { 'content-type': 'application/json' }); res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } })); };
    const { s } = scope();
    const res = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': s.token }, body: '{"model":"m"}' });
    expect(res.status).toBe(400);
    await expect.poll(() => s.contextOverflow).toContain('prompt is too long');
    gateway.revoke(s.token);
  });
});

// Gemini's wire format as its API reference gives it (ai.google.dev/api/generate-content): the model in the path,
// the key in x-goog-api-key (or ?key=), usage in usageMetadata; streamGenerateContent with alt=sse is an event
// stream of GenerateContentResponse chunks, each carrying the usage so far, and without alt=sse a JSON array.
describe('Gemini generateContent', () => {
  const gemUsage = (prompt: number, cached: number, out: number, thoughts: number) => ({
    promptTokenCount: prompt, cachedContentTokenCount: cached, candidatesTokenCount: out, thoughtsTokenCount: thoughts, totalTokenCount: prompt + out + thoughts,
  });
  const answer = (text: string, usage: unknown) => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }], usageMetadata: usage, modelVersion: 'gemini-x-001' });

  it('takes the token from x-goog-api-key or ?key=, sends the real key as x-goog-api-key, and counts usageMetadata (thoughts are output)', async () => {
    handler = (_req, _b, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(answer('hi', gemUsage(40, 10, 7, 3)))); };
    const { s, calls } = scope({ prices: { 'google/gemini-x': { input: 1, cached_input: 0.25, output: 4 } } });
    const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] });
    const a = await fetch(`${gateway.url}/v1beta/models/gemini-x:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': s.token, 'content-type': 'application/json' }, body });
    expect(a.status).toBe(200);
    expect(await a.json()).toMatchObject({ candidates: [{ content: { parts: [{ text: 'hi' }] } }] });
    const b = await fetch(`${gateway.url}/v1beta/models/gemini-x:generateContent?key=${s.token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(b.status).toBe(200);
    const [first, second] = seen.slice(-2);
    expect(first!.path).toBe('/v1beta/models/gemini-x:generateContent');
    expect(second!.path).toBe('/v1beta/models/gemini-x:generateContent');
    for (const h of [first!.headers, second!.headers]) {
      expect(h['x-goog-api-key']).toBe(KEY);
      expect(h['authorization']).toBeUndefined();
    }
    expect(JSON.stringify([first, second])).not.toContain(s.token);
    await expect.poll(() => calls.length).toBe(2);
    expect(calls[0]).toMatchObject({ protocol: 'gemini-generate', model: 'gemini-x', status: 200, stream: false, inputTokens: 40, cachedInputTokens: 10, outputTokens: 10 });
    expect(calls[0]!.costUsd).toBeCloseTo((30 * 1 + 10 * 0.25 + 10 * 4) / 1e6, 10);
    gateway.revoke(s.token);
  });

  it('passes streamGenerateContent?alt=sse through chunk by chunk and keeps the last chunk\'s usage', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    handler = async (req, _b, res) => {
      expect(req.url).toBe('/v1beta/models/gemini-x:streamGenerateContent?alt=sse');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(answer('Hel', gemUsage(25, 0, 1, 0)))}\r\n\r\n`);
      await gate;
      res.end(`data: ${JSON.stringify({ ...answer('lo', gemUsage(25, 5, 9, 2)), candidates: [{ content: { role: 'model', parts: [{ text: 'lo' }] }, finishReason: 'STOP', index: 0 }] })}\r\n\r\n`);
    };
    const { s, calls } = scope();
    const res = await fetch(`${gateway.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse`, { method: 'POST', headers: { 'x-goog-api-key': s.token }, body: '{"contents":[]}' });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('Hel');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toContain('STOP');
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]).toMatchObject({ protocol: 'gemini-generate', model: 'gemini-x', stream: true, inputTokens: 25, cachedInputTokens: 5, outputTokens: 11 });
    gateway.revoke(s.token);
  });

  it('counts a streamGenerateContent answered as a JSON array (no alt=sse) from its last chunk', async () => {
    handler = (_req, _b, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([answer('a', gemUsage(12, 0, 1, 0)), answer('b', gemUsage(12, 0, 4, 0))]));
    };
    const { s, calls } = scope();
    await (await fetch(`${gateway.url}/v1beta/models/gemini-x:streamGenerateContent`, { method: 'POST', headers: { 'x-goog-api-key': s.token }, body: '{}' })).text();
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]).toMatchObject({ stream: true, inputTokens: 12, outputTokens: 4 });
    gateway.revoke(s.token);
  });

  it('refuses an unknown token in Google\'s error shape, without calling upstream', async () => {
    const before = seen.length;
    const res = await fetch(`${gateway.url}/v1beta/models/gemini-x:generateContent?key=berth-nope`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    expect(seen.length).toBe(before);
  });
});

describe('pure rules', () => {
  it.each([
    ['anthropic-messages', { usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 1, output_tokens: 2 } }, { inputTokens: 16, cachedInputTokens: 5, outputTokens: 2 }],
    ['openai-chat', { usage: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } } }, { inputTokens: 10, cachedInputTokens: 4, outputTokens: 2 }],
    ['openai-responses', { usage: { input_tokens: 10, output_tokens: 2, input_tokens_details: { cached_tokens: 3 } } }, { inputTokens: 10, cachedInputTokens: 3, outputTokens: 2 }],
    ['openai-chat', { choices: [] }, null],
    ['gemini-generate', { usageMetadata: { promptTokenCount: 10, cachedContentTokenCount: 4, candidatesTokenCount: 2, thoughtsTokenCount: 5, toolUsePromptTokenCount: 1 } }, { inputTokens: 11, cachedInputTokens: 4, outputTokens: 7 }],
    ['gemini-generate', { candidates: [] }, null],
  ] as const)('usage of a whole %s answer', (protocol, body, want) => {
    expect(usageOfBody(protocol, body)).toEqual(want);
  });

  it('prices cached input at its own rate and an unpriced model at null', () => {
    expect(costOf({ input: 2, cached_input: 1, output: 4 }, { inputTokens: 1_000_000, cachedInputTokens: 500_000, outputTokens: 250_000 })).toBe(2.5);
    expect(costOf(null, { inputTokens: 1, cachedInputTokens: 0, outputTokens: 1 })).toBeNull();
  });

  it.each([
    ['anthropic/claude-sonnet-4-5', 'openai', { provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    ['gpt-4.1', 'openai', { provider: 'openai', model: 'gpt-4.1' }],
    ['openai/org/model', 'anthropic', { provider: 'openai', model: 'org/model' }],
    ['google/gemini-2.5-pro', 'openai', { provider: 'google', model: 'gemini-2.5-pro' }],
  ] as const)('splitModel(%s)', (spec, fallback, want) => {
    expect(splitModel(spec, fallback)).toEqual(want);
  });

  it('normalises base URLs with or without /v1', () => {
    expect(['https://x.test/v1', 'https://x.test/v1/', 'https://x.test', 'https://x.test/v1beta'].map(normaliseBase)).toEqual(['https://x.test', 'https://x.test', 'https://x.test', 'https://x.test']);
  });

  it.each([
    [200, '{}', true, undefined],
    [401, '{"error":{"message":"bad key"}}', false, 'agent:bad_credentials'],
    [403, '{}', false, 'agent:bad_credentials'],
    [404, '{"error":{"message":"The model `x` does not exist","code":"model_not_found"}}', false, 'agent:unknown_model'],
    [400, '{"type":"error","error":{"type":"not_found_error","message":"model: nope not found"}}', false, 'agent:unknown_model'],
    [400, '{"error":{"message":"Unsupported parameter: max_tokens"}}', true, undefined],
    [500, 'oops', true, undefined],
    // Gemini answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
    [400, '{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}', false, 'agent:bad_credentials'],
  ])('a probe answered %i stops the batch only when the settings are surely wrong', (status, body, ok, kind) => {
    const r = classifyProbe(status, body, 'openai', 'x', { provider: 'openai', baseUrl: 'https://u.test', apiKey: 'k' });
    expect(r.ok).toBe(ok);
    if (!r.ok) expect(r.kind).toBe(kind);
  });
});
