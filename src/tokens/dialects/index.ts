// Every dialect an agent speaks, to the policy's Chat Completions and back.
import type { Dialect } from '../records.ts';
import { anthropicAnswer, anthropicEvents, chatRequestOfAnthropic } from './anthropic.ts';
import type { ChatAnswer, ChatRequest, Json } from './chat.ts';
import { chatRequestOfGemini, geminiAnswer, geminiEvents } from './gemini.ts';
import { chatAnswer, chatEvents, chatRequestOfChat } from './openai-chat.ts';
import { chatRequestOfResponses, responsesAnswer, responsesEvents } from './openai-responses.ts';

export { chatAnswerOf, DialectError, type ChatAnswer, type ChatMessage, type ChatRequest, type ChatTool, type ChatToolCall } from './chat.ts';

export function chatRequestOf(dialect: Dialect, body: Json): ChatRequest {
  if (dialect === 'anthropic-messages') return chatRequestOfAnthropic(body);
  if (dialect === 'openai-responses') return chatRequestOfResponses(body);
  if (dialect === 'gemini-generate') return chatRequestOfGemini(body);
  return chatRequestOfChat(body);
}

export interface DialectReply {
  contentType: string;
  body: string;
}

/**
 * The answer in the agent's dialect: whole JSON, or the dialect's event stream when it asked for one
 * (`stream`: the body's stream flag, or Gemini's streamGenerateContent; `sse`: Gemini's alt=sse).
 */
export function replyOf(dialect: Dialect, a: ChatAnswer, opts: { stream: boolean; sse?: boolean; request: Json; now?: number }): DialectReply {
  const created = Math.floor((opts.now ?? Date.now()) / 1000);
  const json = (v: unknown): DialectReply => ({ contentType: 'application/json', body: JSON.stringify(v) });
  const events = (frames: string[]): DialectReply => ({ contentType: 'text/event-stream', body: frames.join('') });
  if (dialect === 'gemini-generate') {
    if (!opts.stream) return json(geminiAnswer(a));
    return opts.sse ? events(geminiEvents(a)) : json([geminiAnswer(a)]);
  }
  if (dialect === 'anthropic-messages') return opts.stream ? events(anthropicEvents(a)) : json(anthropicAnswer(a));
  if (dialect === 'openai-responses') return opts.stream ? events(responsesEvents(a, created)) : json(responsesAnswer(a, created));
  return opts.stream ? events(chatEvents(a, created, opts.request)) : json(chatAnswer(a, created));
}
