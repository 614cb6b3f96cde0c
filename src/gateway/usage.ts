// Token counts from an upstream's answer, for each wire protocol the gateway speaks, whole or streamed.
//
// `inputTokens` counts every input token, cached ones included; `cachedInputTokens` those read from a cache.
// OpenAI reports cached tokens as part of its prompt tokens; Anthropic reports them beside its input tokens
// (cache_read_input_tokens, cache_creation_input_tokens), so those are added in. Gemini's usageMetadata counts
// cached tokens inside promptTokenCount, and bills thinking (thoughtsTokenCount) as output beside the candidates.

export type Protocol = 'anthropic-messages' | 'openai-chat' | 'openai-responses' | 'gemini-generate';

export interface CallUsage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

type Json = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

function anthropicUsage(u: Json): CallUsage {
  const cached = num(u['cache_read_input_tokens']);
  return { inputTokens: num(u['input_tokens']) + cached + num(u['cache_creation_input_tokens']), cachedInputTokens: cached, outputTokens: num(u['output_tokens']) };
}

function chatUsage(u: Json): CallUsage {
  return { inputTokens: num(u['prompt_tokens']), cachedInputTokens: num(obj(u['prompt_tokens_details'])['cached_tokens']), outputTokens: num(u['completion_tokens']) };
}

function responsesUsage(u: Json): CallUsage {
  return { inputTokens: num(u['input_tokens']), cachedInputTokens: num(obj(u['input_tokens_details'])['cached_tokens']), outputTokens: num(u['output_tokens']) };
}

function geminiUsage(u: Json): CallUsage {
  return {
    inputTokens: num(u['promptTokenCount']) + num(u['toolUsePromptTokenCount']),
    cachedInputTokens: num(u['cachedContentTokenCount']),
    outputTokens: num(u['candidatesTokenCount']) + num(u['thoughtsTokenCount']),
  };
}

/** A Gemini answer's usage; a streamed one without `alt=sse` is a JSON array whose last chunk holds the totals. */
function geminiBodyUsage(body: unknown): CallUsage | null {
  const chunks = Array.isArray(body) ? body : [body];
  const last = [...chunks].reverse().map((c) => obj(c)['usageMetadata']).find((u) => typeof u === 'object' && u !== null);
  return last ? geminiUsage(last as Json) : null;
}

/** Usage of a whole (not streamed) JSON answer; null when it reports none. */
export function usageOfBody(protocol: Protocol, body: unknown): CallUsage | null {
  if (protocol === 'gemini-generate') return geminiBodyUsage(body);
  const u = obj(body)['usage'];
  if (typeof u !== 'object' || u === null) return null;
  if (protocol === 'anthropic-messages') return anthropicUsage(u as Json);
  if (protocol === 'openai-chat') return chatUsage(u as Json);
  return responsesUsage(u as Json);
}

/** Follows a streamed answer event by event; `usage` is what the stream reported so far. */
export class StreamUsage {
  private found: CallUsage | null = null;
  private anthropicInput: Json = {};
  model: string | null = null;

  constructor(private readonly protocol: Protocol) {}

  get usage(): CallUsage | null {
    return this.found;
  }

  event(data: string): void {
    let e: Json;
    try {
      e = obj(JSON.parse(data));
    } catch {
      return;
    }
    if (this.protocol === 'anthropic-messages') return this.anthropic(e);
    if (this.protocol === 'gemini-generate') {
      // Every chunk carries usageMetadata so far; the last one has the call's totals.
      if (typeof e['modelVersion'] === 'string') this.model = e['modelVersion'];
      this.found = geminiBodyUsage(e) ?? this.found;
      return;
    }
    if (this.protocol === 'openai-chat') {
      if (typeof e['model'] === 'string') this.model = e['model'];
      if (typeof e['usage'] === 'object' && e['usage'] !== null) this.found = chatUsage(e['usage'] as Json);
      return;
    }
    const response = obj(e['response']);
    if (typeof response['model'] === 'string') this.model = response['model'];
    if (typeof response['usage'] === 'object' && response['usage'] !== null) this.found = responsesUsage(response['usage'] as Json);
  }

  /** message_start carries the input side; each message_delta the output so far (cumulative). */
  private anthropic(e: Json): void {
    if (e['type'] === 'message_start') {
      const message = obj(e['message']);
      if (typeof message['model'] === 'string') this.model = message['model'];
      this.anthropicInput = obj(message['usage']);
      this.found = anthropicUsage(this.anthropicInput);
    } else if (e['type'] === 'message_delta' && typeof e['usage'] === 'object' && e['usage'] !== null) {
      this.found = anthropicUsage({ ...this.anthropicInput, ...(e['usage'] as Json) });
    }
  }
}

export const NO_USAGE: CallUsage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };

export function addUsage(a: CallUsage, b: CallUsage): CallUsage {
  return { inputTokens: a.inputTokens + b.inputTokens, cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

/** One model call as the gateway records it (model-calls.jsonl). */
export interface CallRecord extends CallUsage {
  at: string;
  protocol: Protocol;
  model: string | null;
  status: number;
  latencyMs: number;
  costUsd: number | null;
  stream: boolean;
  /** Upstream attempts (more than one when a rate limit was retried). */
  attempts: number;
  /** Training mode: how long the call waited at the gateway while the trainer drained (not the agent's time). */
  heldMs?: number;
}
