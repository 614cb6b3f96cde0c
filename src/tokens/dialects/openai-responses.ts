// OpenAI Responses (codex) to Chat Completions and back: instructions and developer messages become system messages,
// function_call items an assistant's tool_calls, function_call_output items tool messages; the answer becomes a
// message item and function_call items, streamed as response.* events.
import { arr, DialectError, obj, samplingOf, sseFrame, str, type ChatAnswer, type ChatMessage, type ChatRequest, type ChatTool, type Json } from './chat.ts';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return arr(content).map((p) => {
    const part = obj(p);
    if (part['type'] === 'input_image' || part['type'] === 'input_file') throw new DialectError(`an ${String(part['type'])} part cannot be sent to a text policy`);
    return str(part['text']) ?? '';
  }).join('');
}

function messagesOf(input: unknown): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: ChatMessage[] = [];
  for (const raw of arr(input)) {
    const item = obj(raw);
    const type = item['type'] ?? (item['role'] ? 'message' : undefined);
    if (type === 'message') {
      const role = item['role'] === 'assistant' ? 'assistant' : item['role'] === 'system' || item['role'] === 'developer' ? 'system' : 'user';
      out.push({ role, content: textOf(item['content']) });
    } else if (type === 'function_call') {
      const call = { id: str(item['call_id']) ?? '', type: 'function' as const, function: { name: str(item['name']) ?? '', arguments: str(item['arguments']) ?? '{}' } };
      const last = out.at(-1);
      // Calls that follow an assistant message (or each other) belong to that one assistant turn.
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      const output = item['output'];
      out.push({ role: 'tool', tool_call_id: str(item['call_id']) ?? '', content: typeof output === 'string' ? output : textOf(output) });
    } else if (type !== 'reasoning') {
      throw new DialectError(`an input item of type ${String(type)} cannot be sent to the policy`);
    }
  }
  return out;
}

export function chatRequestOfResponses(body: Json): ChatRequest {
  if (body['input'] === undefined) throw new DialectError('the request has no input');
  const instructions = str(body['instructions']);
  const messages: ChatMessage[] = [...(instructions ? [{ role: 'system' as const, content: instructions }] : []), ...messagesOf(body['input'])];
  const tools: ChatTool[] = arr(body['tools']).map(obj).filter((t) => t['type'] === 'function').map((t) => ({
    type: 'function', function: { name: str(t['name']) ?? '', ...(str(t['description']) ? { description: str(t['description'])! } : {}), parameters: t['parameters'] },
  }));
  const choice = body['tool_choice'];
  const toolChoice = typeof choice === 'string' ? choice : obj(choice)['type'] === 'function' ? { type: 'function', function: { name: str(obj(choice)['name']) ?? '' } } : undefined;
  return {
    messages, ...(tools.length ? { tools } : {}), ...(toolChoice !== undefined && tools.length ? { tool_choice: toolChoice } : {}),
    ...samplingOf(body, { max_output_tokens: 'max_tokens', temperature: 'temperature', top_p: 'top_p' }),
  };
}

const responseId = (a: ChatAnswer): string => `resp_${a.id.replace(/^chatcmpl-/, '')}`;

function outputOf(a: ChatAnswer): Json[] {
  const out: Json[] = [];
  if (a.content) {
    out.push({ type: 'message', id: `msg_${a.id.replace(/^chatcmpl-/, '')}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: a.content, annotations: [] }] });
  }
  for (const t of a.toolCalls) out.push({ type: 'function_call', id: `fc_${t.id}`, call_id: t.id, name: t.function.name, arguments: t.function.arguments, status: 'completed' });
  return out;
}

export function responsesAnswer(a: ChatAnswer, created: number, output = outputOf(a)): Json {
  const incomplete = a.finishReason === 'length';
  return {
    id: responseId(a), object: 'response', created_at: created, status: incomplete ? 'incomplete' : 'completed',
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null, model: a.model, output, parallel_tool_calls: true,
    usage: { input_tokens: a.promptTokens, output_tokens: a.completionTokens, total_tokens: a.promptTokens + a.completionTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
  };
}

export function responsesEvents(a: ChatAnswer, created: number): string[] {
  let seq = 0;
  const frames: string[] = [];
  const emit = (type: string, data: Json): void => { frames.push(sseFrame({ type, sequence_number: seq++, ...data }, type)); };
  const output = outputOf(a);
  emit('response.created', { response: { ...responsesAnswer(a, created, []), status: 'in_progress', usage: null } });
  emit('response.in_progress', { response: { ...responsesAnswer(a, created, []), status: 'in_progress', usage: null } });
  output.forEach((item, output_index) => {
    const id = item['id'];
    if (item['type'] === 'message') {
      const text = str(obj(arr(item['content'])[0])['text']) ?? '';
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      emit('response.content_part.added', { item_id: id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      emit('response.output_text.delta', { item_id: id, output_index, content_index: 0, delta: text });
      emit('response.output_text.done', { item_id: id, output_index, content_index: 0, text });
      emit('response.content_part.done', { item_id: id, output_index, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    } else {
      emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      emit('response.function_call_arguments.delta', { item_id: id, output_index, delta: item['arguments'] });
      emit('response.function_call_arguments.done', { item_id: id, output_index, arguments: item['arguments'] });
    }
    emit('response.output_item.done', { output_index, item });
  });
  emit(a.finishReason === 'length' ? 'response.incomplete' : 'response.completed', { response: responsesAnswer(a, created, output) });
  return frames;
}
