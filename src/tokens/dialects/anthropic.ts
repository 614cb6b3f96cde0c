// Anthropic Messages (claude-code) to Chat Completions and back: system blocks become a system message, tool_use
// blocks an assistant's tool_calls, tool_result blocks tool messages; the answer's text and tool calls become
// content blocks, streamed as message_start / content_block_* / message_delta / message_stop.
import {
  argumentsObject, arr, DialectError, obj, samplingOf, sseFrame, str, type ChatAnswer, type ChatMessage, type ChatRequest, type ChatTool, type Json,
} from './chat.ts';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return arr(content).map((b) => {
    const block = obj(b);
    if (block['type'] === 'text') return str(block['text']) ?? '';
    if (block['type'] === 'image' || block['type'] === 'document') throw new DialectError(`a ${String(block['type'])} block cannot be sent to a text policy`);
    return '';
  }).join('');
}

function messagesOf(role: unknown, content: unknown): ChatMessage[] {
  if (typeof content === 'string') return [{ role: role === 'assistant' ? 'assistant' : 'user', content }];
  const blocks = arr(content).map(obj);
  if (role === 'assistant') {
    const text = blocks.filter((b) => b['type'] === 'text').map((b) => str(b['text']) ?? '').join('');
    const calls = blocks.filter((b) => b['type'] === 'tool_use').map((b) => ({
      id: str(b['id']) ?? '', type: 'function' as const, function: { name: str(b['name']) ?? '', arguments: JSON.stringify(b['input'] ?? {}) },
    }));
    return [{ role: 'assistant', content: text === '' && calls.length ? null : text, ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  const out: ChatMessage[] = blocks.filter((b) => b['type'] === 'tool_result').map((b) => ({
    role: 'tool', tool_call_id: str(b['tool_use_id']) ?? '', content: (b['is_error'] === true ? 'Error: ' : '') + textOf(b['content'] ?? ''),
  }));
  const rest = blocks.filter((b) => b['type'] !== 'tool_result');
  if (rest.length) out.push({ role: 'user', content: textOf(rest) });
  return out;
}

function toolChoiceOf(c: unknown): unknown {
  const choice = obj(c);
  if (choice['type'] === 'any') return 'required';
  if (choice['type'] === 'tool') return { type: 'function', function: { name: str(choice['name']) ?? '' } };
  if (choice['type'] === 'none') return 'none';
  return c === undefined ? undefined : 'auto';
}

export function chatRequestOfAnthropic(body: Json): ChatRequest {
  if (!Array.isArray(body['messages'])) throw new DialectError('the request has no messages array');
  const system = body['system'] === undefined ? '' : textOf(body['system']);
  const messages: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of arr(body['messages'])) messages.push(...messagesOf(obj(m)['role'], obj(m)['content']));
  // Server tools (web search, ...) have a type of their own and no input_schema: the policy cannot run them.
  const tools: ChatTool[] = arr(body['tools']).map(obj).filter((t) => t['input_schema'] !== undefined).map((t) => ({
    type: 'function', function: { name: str(t['name']) ?? '', ...(str(t['description']) ? { description: str(t['description'])! } : {}), parameters: t['input_schema'] },
  }));
  const toolChoice = toolChoiceOf(body['tool_choice']);
  const stop = arr(body['stop_sequences']).filter((s): s is string => typeof s === 'string');
  return {
    messages, ...(tools.length ? { tools } : {}), ...(toolChoice !== undefined && tools.length ? { tool_choice: toolChoice } : {}),
    ...samplingOf(body, { max_tokens: 'max_tokens', temperature: 'temperature', top_p: 'top_p' }), ...(stop.length ? { stop } : {}),
  };
}

const STOP_REASON: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' };
const stopReasonOf = (a: ChatAnswer): string => (a.toolCalls.length ? 'tool_use' : STOP_REASON[a.finishReason] ?? 'end_turn');
const messageId = (a: ChatAnswer): string => `msg_${a.id.replace(/^chatcmpl-/, '')}`;

function blocksOf(a: ChatAnswer): Json[] {
  const blocks: Json[] = a.content ? [{ type: 'text', text: a.content }] : [];
  for (const t of a.toolCalls) blocks.push({ type: 'tool_use', id: t.id, name: t.function.name, input: argumentsObject(t.function.arguments) });
  return blocks;
}

export function anthropicAnswer(a: ChatAnswer): Json {
  return {
    id: messageId(a), type: 'message', role: 'assistant', model: a.model, content: blocksOf(a), stop_reason: stopReasonOf(a), stop_sequence: null,
    usage: { input_tokens: a.promptTokens, output_tokens: a.completionTokens },
  };
}

export function anthropicEvents(a: ChatAnswer): string[] {
  const frames = [sseFrame({
    type: 'message_start',
    message: { id: messageId(a), type: 'message', role: 'assistant', model: a.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: a.promptTokens, output_tokens: 0 } },
  }, 'message_start')];
  blocksOf(a).forEach((block, index) => {
    const tool = block['type'] === 'tool_use';
    frames.push(sseFrame({ type: 'content_block_start', index, content_block: tool ? { ...block, input: {} } : { type: 'text', text: '' } }, 'content_block_start'));
    const delta = tool ? { type: 'input_json_delta', partial_json: JSON.stringify(block['input']) } : { type: 'text_delta', text: block['text'] };
    frames.push(sseFrame({ type: 'content_block_delta', index, delta }, 'content_block_delta'));
    frames.push(sseFrame({ type: 'content_block_stop', index }, 'content_block_stop'));
  });
  frames.push(sseFrame({ type: 'message_delta', delta: { stop_reason: stopReasonOf(a), stop_sequence: null }, usage: { output_tokens: a.completionTokens } }, 'message_delta'));
  frames.push(sseFrame({ type: 'message_stop' }, 'message_stop'));
  return frames;
}
