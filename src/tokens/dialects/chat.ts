// The Chat Completions shapes every dialect is translated to (the policy engine's) and from (its answer).

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
}

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: unknown };
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: unknown;
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
}

/** The engine's whole answer, reduced to what a dialect's answer is made of. */
export interface ChatAnswer {
  id: string;
  model: string;
  content: string | null;
  toolCalls: ChatToolCall[];
  /** Chat Completions' finish_reason: stop, length, tool_calls, ... */
  finishReason: string;
  promptTokens: number;
  completionTokens: number;
}

export type Json = Record<string, unknown>;
export const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A request the gateway cannot translate: answered 400 in the agent's dialect with this message. */
export class DialectError extends Error {
  override name = 'DialectError';
}

/** Copies the sampling fields a dialect names (its own key → the chat key) when they are numbers. */
export function samplingOf(from: Json, keys: Record<string, 'max_tokens' | 'temperature' | 'top_p'>): Partial<ChatRequest> {
  const out: Partial<ChatRequest> = {};
  for (const [k, to] of Object.entries(keys)) {
    const v = num(from[k]);
    if (v !== undefined) out[to] = v;
  }
  return out;
}

/** Tool call arguments as an object (the dialects that carry objects); a string that is not a JSON object is kept under `_raw`. */
export function argumentsObject(args: string): Json {
  try {
    const v = JSON.parse(args) as unknown;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Json;
  } catch {
    // not JSON: handed over as text
  }
  return { _raw: args };
}

/** The engine's Chat Completions answer as a ChatAnswer. */
export function chatAnswerOf(body: unknown, fallbackModel: string): ChatAnswer {
  const b = obj(body);
  const choice = obj(arr(b['choices'])[0]);
  const message = obj(choice['message']);
  const usage = obj(b['usage']);
  const toolCalls = arr(message['tool_calls']).map((t, i): ChatToolCall => {
    const f = obj(obj(t)['function']);
    return { id: str(obj(t)['id']) ?? `call_${i}`, type: 'function', function: { name: str(f['name']) ?? '', arguments: str(f['arguments']) ?? '{}' } };
  });
  return {
    id: str(b['id']) ?? 'chatcmpl-berth',
    model: str(b['model']) ?? fallbackModel,
    content: str(message['content']) ?? null,
    toolCalls,
    finishReason: str(choice['finish_reason']) ?? (toolCalls.length ? 'tool_calls' : 'stop'),
    promptTokens: num(usage['prompt_tokens']) ?? 0,
    completionTokens: num(usage['completion_tokens']) ?? 0,
  };
}

/** One server-sent event, with an event name when the dialect uses them. */
export const sseFrame = (data: unknown, event?: string): string =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
