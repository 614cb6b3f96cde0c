// What a policy engine that speaks Chat Completions (vLLM, SGLang) is asked for and what it answers, for capture:
// the request gets `logprobs`, `top_logprobs: 0` (the chosen token's logprob alone) and vLLM's `return_token_ids`;
// the answer carries `prompt_token_ids` (on the response, or on the choice), `choices[0].token_ids` and
// `choices[0].logprobs.content[].logprob`.

export interface Sampling {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  max_tokens?: number;
  seed?: number;
}

export interface CapturedTokens {
  prompt: number[];
  generation: number[];
  logprobs: number[];
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x) && (x as number) >= 0);

/** The capture fields and the trainer's sampling, over whatever the (translated) request asked. */
export function withCaptureFields(chat: Json, model: string, sampling: Sampling): Json {
  const out: Json = { ...chat, model, logprobs: true, top_logprobs: 0, return_token_ids: true };
  for (const [k, v] of Object.entries(sampling)) if (v !== undefined) out[k] = v;
  if (sampling.max_tokens !== undefined) delete out['max_completion_tokens'];
  delete out['n'];
  return out;
}

/** The tokens of a whole Chat Completions answer with one choice, or why they cannot be taken. */
export function tokensOfChatAnswer(body: unknown): CapturedTokens | { error: string } {
  const b = obj(body);
  const choices = Array.isArray(b['choices']) ? b['choices'] : [];
  if (choices.length !== 1) return { error: `the engine answered ${choices.length} choices; capture needs exactly one` };
  const choice = obj(choices[0]);
  const prompt = b['prompt_token_ids'] ?? choice['prompt_token_ids'] ?? obj(choice['message'])['prompt_token_ids'];
  if (!isIds(prompt)) return { error: 'the engine\'s answer has no prompt_token_ids (vLLM returns them when the request says return_token_ids: true; vLLM 0.10.2 or later)' };
  const generation = choice['token_ids'];
  if (!isIds(generation)) return { error: 'the engine\'s answer has no choices[0].token_ids (vLLM returns them when the request says return_token_ids: true)' };
  const content = obj(choice['logprobs'])['content'];
  if (!Array.isArray(content)) return { error: 'the engine\'s answer has no choices[0].logprobs.content (the request asked logprobs: true)' };
  const logprobs = content.map((c) => obj(c)['logprob']);
  if (!logprobs.every((l): l is number => typeof l === 'number')) return { error: 'a logprob in choices[0].logprobs.content is not a number' };
  if (logprobs.length !== generation.length) {
    return { error: `the engine gave ${generation.length} generated token ids but ${logprobs.length} logprobs` };
  }
  return { prompt, generation, logprobs };
}
