// Before a training run: does the policy endpoint give what a trainer needs? The same one-token request is sent
// at temperature 1 and 0.5, asking for the top logprobs. Token ids must come back, and the logprobs must be the
// processed ones (after temperature): those of the same alternatives differ between the two temperatures, where
// raw logprobs (vLLM's default --logprobs-mode raw_logprobs) do not.
import { tokensOfChatAnswer } from './vllm.ts';

export type PolicyProbe = { ok: true } | { ok: false; reason: string };

export const PROBE_TEMPERATURES = [1, 0.5] as const;

export function probeRequest(model: string, temperature: number): Record<string, unknown> {
  return {
    model, messages: [{ role: 'user', content: 'Reply with the single word OK.' }], max_tokens: 1, temperature, seed: 0,
    logprobs: true, top_logprobs: 5, return_token_ids: true,
  };
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

function topOf(body: unknown): Map<string, number> {
  const first = obj((obj(obj((obj(body)['choices'] as unknown[] | undefined)?.[0])['logprobs'])['content'] as unknown[] | undefined)?.[0]);
  const top = Array.isArray(first['top_logprobs']) ? first['top_logprobs'] : [];
  return new Map(top.map(obj).filter((t) => typeof t['token'] === 'string' && typeof t['logprob'] === 'number').map((t) => [t['token'] as string, t['logprob'] as number]));
}

const START_WITH = 'Start vLLM with --logprobs-mode processed_logprobs (vLLM 0.10.2 or later, which also returns token ids for return_token_ids: true)';

/** `at1` and `atHalf`: the endpoint's answers (status and parsed body) at temperature 1 and 0.5. */
export function classifyPolicyProbe(where: string, at1: { status: number; body: unknown }, atHalf: { status: number; body: unknown }): PolicyProbe {
  for (const a of [at1, atHalf]) {
    if (a.status >= 400) return { ok: false, reason: `the policy endpoint ${where} answered HTTP ${a.status}: ${JSON.stringify(a.body).slice(0, 300)}` };
  }
  const tokens = tokensOfChatAnswer(at1.body);
  if ('error' in tokens) return { ok: false, reason: `the policy endpoint ${where} cannot serve training: ${tokens.error}. ${START_WITH}.` };
  const a = topOf(at1.body);
  const b = topOf(atHalf.body);
  const both = [...a.keys()].filter((k) => b.has(k));
  if (both.length === 0) return { ok: false, reason: `the policy endpoint ${where} returned no top_logprobs to compare: cannot tell raw from processed logprobs. ${START_WITH}.` };
  const moved = both.some((k) => Math.abs(a.get(k)! - b.get(k)!) > 1e-4 * Math.max(1, Math.abs(a.get(k)!)));
  if (!moved) {
    return { ok: false, reason: `the policy endpoint ${where} returns raw logprobs (the same at temperature 1 and 0.5), not the processed ones the sampler used, so a trainer's importance ratios would be wrong. ${START_WITH}.` };
  }
  return { ok: true };
}
