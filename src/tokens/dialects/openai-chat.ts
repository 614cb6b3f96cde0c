// Chat Completions in, Chat Completions out: the request passes as the agent wrote it (the gateway adds the capture
// fields), the answer is rebuilt without the engine's token arrays, streamed as chat.completion.chunk events.
import { DialectError, obj, sseFrame, type ChatAnswer, type ChatRequest, type Json } from './chat.ts';

export function chatRequestOfChat(body: Json): ChatRequest & Json {
  if (!Array.isArray(body['messages'])) throw new DialectError('the request has no messages array');
  const out: Json = { ...body };
  for (const k of ['stream', 'stream_options', 'logprobs', 'top_logprobs', 'model']) delete out[k];
  return out as unknown as ChatRequest & Json;
}

const messageOf = (a: ChatAnswer): Json => ({
  role: 'assistant', content: a.content, ...(a.toolCalls.length ? { tool_calls: a.toolCalls } : {}),
});

const usageOf = (a: ChatAnswer): Json => ({ prompt_tokens: a.promptTokens, completion_tokens: a.completionTokens, total_tokens: a.promptTokens + a.completionTokens });

export function chatAnswer(a: ChatAnswer, created: number): Json {
  return {
    id: a.id, object: 'chat.completion', created, model: a.model,
    choices: [{ index: 0, message: messageOf(a), finish_reason: a.finishReason, logprobs: null }], usage: usageOf(a),
  };
}

export function chatEvents(a: ChatAnswer, created: number, request: Json): string[] {
  const chunk = (delta: Json, finish: string | null, extra: Json = {}): string => sseFrame({
    id: a.id, object: 'chat.completion.chunk', created, model: a.model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra,
  });
  const frames = [chunk({ role: 'assistant', content: '' }, null)];
  if (a.content) frames.push(chunk({ content: a.content }, null));
  a.toolCalls.forEach((t, index) => frames.push(chunk({ tool_calls: [{ index, id: t.id, type: 'function', function: { name: t.function.name, arguments: t.function.arguments } }] }, null)));
  frames.push(chunk({}, a.finishReason));
  if (obj(request['stream_options'])['include_usage'] === true) {
    frames.push(sseFrame({ id: a.id, object: 'chat.completion.chunk', created, model: a.model, choices: [], usage: usageOf(a) }));
  }
  frames.push(sseFrame('[DONE]'));
  return frames;
}
