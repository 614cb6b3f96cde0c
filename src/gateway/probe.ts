// One small call before a batch starts: bad credentials or an unknown model stop the batch there, instead of
// failing every episode after its sandbox started.
import { modelStatusMeaning } from '../outcomes/index.ts';
import type { ModelGateway } from './server.ts';
import { keyVariableOf, type Provider, type Upstream } from './upstreams.ts';
import type { Protocol } from './usage.ts';

export type ProbeResult =
  | { ok: true; status: number }
  | { ok: false; kind: 'agent:bad_credentials' | 'agent:unknown_model'; status: number; reason: string };

const PATHS: Record<Protocol, (model: string) => string> = {
  'anthropic-messages': () => '/v1/messages',
  'openai-chat': () => '/v1/chat/completions',
  'openai-responses': () => '/v1/responses',
  'gemini-generate': (model) => `/v1beta/models/${encodeURIComponent(model)}:generateContent`,
};

function probeBody(protocol: Protocol, model: string): unknown {
  const text = 'Reply with the single word OK.';
  if (protocol === 'gemini-generate') return { contents: [{ role: 'user', parts: [{ text }] }], generationConfig: { maxOutputTokens: 16 } };
  if (protocol === 'anthropic-messages') return { model, max_tokens: 1, messages: [{ role: 'user', content: text }] };
  if (protocol === 'openai-responses') return { model, max_output_tokens: 16, input: text };
  // No max_tokens: some models refuse it (they want max_completion_tokens), which would look like a bad setting.
  return { model, messages: [{ role: 'user', content: text }] };
}

function messageOf(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: { message?: unknown; code?: unknown; type?: unknown } | string };
    if (typeof j.error === 'string') return j.error;
    return [j.error?.code ?? j.error?.type, j.error?.message].filter((x) => typeof x === 'string').join(': ') || text;
  } catch {
    return text;
  }
}

const MODEL_TEXT = /model/i;
/** Gemini answers a bad key with 400 (INVALID_ARGUMENT, reason API_KEY_INVALID), not 401. */
const BAD_KEY_TEXT = /API[_ ]KEY[_ ]INVALID|API key not valid/i;
const MISSING_TEXT = /not[ _]found|does not exist|unknown|invalid|not supported|no such|unavailable/i;

/** Classifies the probe's answer: only what surely means "the settings are wrong" stops the batch. */
export function classifyProbe(status: number, body: string, provider: Provider, model: string, upstream: Upstream): ProbeResult {
  if (status < 400) return { ok: true, status };
  const message = messageOf(body).slice(0, 400);
  const where = `${upstream.baseUrl} (${provider}, model ${model})`;
  const meaning = modelStatusMeaning(status);
  if (meaning === 'agent:bad_credentials' || (status === 400 && BAD_KEY_TEXT.test(body))) {
    return { ok: false, kind: 'agent:bad_credentials', status, reason: `${where} refused the key with HTTP ${status}: ${message}. Check ${keyVariableOf(provider)} on the worker (or berth.toml [secrets]).` };
  }
  if (meaning === 'agent:unknown_model' || ((status === 400 || status === 422) && MODEL_TEXT.test(message) && MISSING_TEXT.test(message))) {
    return { ok: false, kind: 'agent:unknown_model', status, reason: `${where} does not know the model: HTTP ${status}: ${message}. Check --model.` };
  }
  return { ok: true, status };
}

export async function probeModel(gateway: ModelGateway, opts: { provider: Provider; protocol: Protocol; model: string; upstream: Upstream }): Promise<ProbeResult> {
  const scope = gateway.register({ label: 'probe', upstreams: { [opts.provider]: opts.upstream }, prices: {} });
  try {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.provider === 'anthropic') {
      headers['x-api-key'] = scope.token;
      headers['anthropic-version'] = '2023-06-01';
    } else if (opts.provider === 'google') headers['x-goog-api-key'] = scope.token;
    else headers['authorization'] = `Bearer ${scope.token}`;
    const res = await fetch(`${gateway.url}${PATHS[opts.protocol](opts.model)}`, {
      method: 'POST', headers, body: JSON.stringify(probeBody(opts.protocol, opts.model)), signal: AbortSignal.timeout(120_000),
    });
    return classifyProbe(res.status, await res.text(), opts.provider, opts.model, opts.upstream);
  } finally {
    gateway.revoke(scope.token);
  }
}
