// Each agent dialect to Chat Completions and back: messages, tool calls and their results, tools, sampling; the
// answer whole and as the dialect's event stream.
import { describe, expect, it } from 'vitest';
import { chatRequestOf, DialectError, replyOf, tokensOfChatAnswer, withCaptureFields, type ChatAnswer, type Dialect } from '../../src/tokens/index.ts';

const SCHEMA = { type: 'object', properties: { cmd: { type: 'string' } } };
const CHAT_HISTORY = [
  { role: 'system', content: 'be brief' },
  { role: 'user', content: 'list files' },
  { role: 'assistant', content: 'running', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
];
const CHAT_TOOLS = [{ type: 'function', function: { name: 'bash', description: 'run', parameters: SCHEMA } }];

const requests: Array<{ dialect: Dialect; body: Record<string, unknown>; ids?: string[] }> = [
  {
    dialect: 'openai-chat',
    body: { model: 'x', stream: true, logprobs: false, messages: CHAT_HISTORY, tools: CHAT_TOOLS, max_tokens: 50, temperature: 0.3 },
  },
  {
    dialect: 'anthropic-messages',
    body: {
      model: 'x', max_tokens: 50, temperature: 0.3, system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'bash', description: 'run', input_schema: SCHEMA }, { type: 'web_search_20250305', name: 'web_search' }],
      messages: [
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: [{ type: 'text', text: 'running' }, { type: 'tool_use', id: 'c1', name: 'bash', input: { cmd: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'a.txt' }] }] },
      ],
    },
  },
  {
    dialect: 'openai-responses',
    body: {
      model: 'x', max_output_tokens: 50, temperature: 0.3, instructions: 'be brief', tools: [{ type: 'function', name: 'bash', description: 'run', parameters: SCHEMA }],
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
        { type: 'reasoning', id: 'rs1', summary: [] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'running' }] },
        { type: 'function_call', call_id: 'c1', name: 'bash', arguments: '{"cmd":"ls"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'a.txt' },
      ],
    },
  },
  {
    dialect: 'gemini-generate',
    body: {
      systemInstruction: { parts: [{ text: 'be brief' }] }, generationConfig: { maxOutputTokens: 50, temperature: 0.3 },
      tools: [{ functionDeclarations: [{ name: 'bash', description: 'run', parameters: SCHEMA }] }],
      contents: [
        { role: 'user', parts: [{ text: 'list files' }] },
        { role: 'model', parts: [{ text: 'running' }, { functionCall: { id: 'c1', name: 'bash', args: { cmd: 'ls' } } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'bash', response: { output: 'a.txt' } } }] },
      ],
    },
  },
];

describe('chatRequestOf', () => {
  for (const r of requests) {
    it(`${r.dialect}: the same conversation, tools and sampling in Chat Completions`, () => {
      const chat = chatRequestOf(r.dialect, r.body) as unknown as Record<string, unknown>;
      const toolContent = r.dialect === 'gemini-generate' ? '{"output":"a.txt"}' : 'a.txt';
      expect(chat['messages']).toEqual([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: 'running', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: toolContent },
      ]);
      expect(chat['tools']).toEqual(CHAT_TOOLS);
      expect(chat['max_tokens']).toBe(50);
      expect(chat['temperature']).toBe(0.3);
      expect(chat['stream']).toBeUndefined();
    });
  }

  it('gemini: a call without an id gets one from its place, and its response the same id', () => {
    const chat = chatRequestOf('gemini-generate', {
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ functionCall: { name: 'bash', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'bash', response: {} } }] },
      ],
    });
    expect(chat.messages[1]!.tool_calls![0]!.id).toBe('call_1_0');
    expect(chat.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'call_1_0' });
  });

  it.each<[Dialect, Record<string, unknown>, RegExp]>([
    ['anthropic-messages', { messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] }, /image block cannot be sent/],
    ['openai-responses', { input: [{ type: 'web_search_call' }] }, /web_search_call cannot be sent/],
    ['gemini-generate', { model: 'x' }, /no contents array/],
    ['openai-chat', { model: 'x' }, /no messages array/],
  ])('%s: what cannot be translated is refused by name', (dialect, body, message) => {
    expect(() => chatRequestOf(dialect, body)).toThrow(DialectError);
    expect(() => chatRequestOf(dialect, body)).toThrow(message);
  });

  it('the capture fields and the trainer\'s sampling go over what the agent asked', () => {
    const body = withCaptureFields({ messages: [], temperature: 0.3, max_completion_tokens: 9, n: 2 }, 'policy', { temperature: 1, max_tokens: 100 });
    expect(body).toEqual({ messages: [], model: 'policy', temperature: 1, max_tokens: 100, logprobs: true, top_logprobs: 0, return_token_ids: true });
  });
});

const ANSWER: ChatAnswer = {
  id: 'chatcmpl-7', model: 'policy', content: 'running', toolCalls: [{ id: 'c2', type: 'function', function: { name: 'bash', arguments: '{"cmd":"pwd"}' } }],
  finishReason: 'tool_calls', promptTokens: 40, completionTokens: 12,
};

const dataOf = (body: string): Array<Record<string, unknown>> =>
  body.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);

describe('replyOf', () => {
  it('openai-chat: a whole answer and a chunk stream with tool calls and usage', () => {
    expect(JSON.parse(replyOf('openai-chat', ANSWER, { stream: false, request: {} }).body)).toMatchObject({
      object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'running', tool_calls: ANSWER.toolCalls }, finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 40, completion_tokens: 12 },
    });
    const s = replyOf('openai-chat', ANSWER, { stream: true, request: { stream_options: { include_usage: true } } });
    expect(s.contentType).toBe('text/event-stream');
    expect(s.body.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const chunks = dataOf(s.body);
    expect(chunks.map((c) => (c['choices'] as Array<Record<string, unknown>>)[0]?.['finish_reason'] ?? null)).toContain('tool_calls');
    expect(chunks.at(-1)!['usage']).toEqual({ prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 });
  });

  it('anthropic-messages: content blocks, tool_use input as an object, and the event sequence', () => {
    expect(JSON.parse(replyOf('anthropic-messages', ANSWER, { stream: false, request: {} }).body)).toMatchObject({
      type: 'message', role: 'assistant', stop_reason: 'tool_use',
      content: [{ type: 'text', text: 'running' }, { type: 'tool_use', id: 'c2', name: 'bash', input: { cmd: 'pwd' } }], usage: { input_tokens: 40, output_tokens: 12 },
    });
    const events = dataOf(replyOf('anthropic-messages', ANSWER, { stream: true, request: {} }).body);
    expect(events.map((e) => e['type'])).toEqual([
      'message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    expect(events[5]!['delta']).toEqual({ type: 'input_json_delta', partial_json: '{"cmd":"pwd"}' });
  });

  it('openai-responses: a message item and a function_call item, streamed to response.completed', () => {
    const whole = JSON.parse(replyOf('openai-responses', ANSWER, { stream: false, request: {} }).body) as Record<string, unknown>;
    expect(whole['output']).toMatchObject([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'running' }] },
      { type: 'function_call', call_id: 'c2', name: 'bash', arguments: '{"cmd":"pwd"}' },
    ]);
    const events = dataOf(replyOf('openai-responses', ANSWER, { stream: true, request: {} }).body);
    expect(events[0]!['type']).toBe('response.created');
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed', output: whole['output'] } });
    expect(events.map((e) => e['sequence_number'])).toEqual(events.map((_, i) => i));
  });

  it('gemini-generate: parts with functionCall args, a JSON array when streamed without alt=sse', () => {
    const whole = JSON.parse(replyOf('gemini-generate', ANSWER, { stream: false, request: {} }).body) as Record<string, unknown>;
    expect(whole).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'running' }, { functionCall: { name: 'bash', args: { cmd: 'pwd' } } }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 12 },
    });
    expect(JSON.parse(replyOf('gemini-generate', ANSWER, { stream: true, request: {} }).body)).toEqual([whole]);
    expect(dataOf(replyOf('gemini-generate', ANSWER, { stream: true, sse: true, request: {} }).body)).toEqual([whole]);
  });
});

describe('tokensOfChatAnswer', () => {
  const good = {
    prompt_token_ids: [1, 2], choices: [{ message: { content: 'x' }, token_ids: [3, 4], logprobs: { content: [{ token: 'a', logprob: -0.5 }, { token: 'b', logprob: -0.1 }] } }],
  };
  it('takes vLLM\'s prompt_token_ids, token_ids and logprobs', () => {
    expect(tokensOfChatAnswer(good)).toEqual({ prompt: [1, 2], generation: [3, 4], logprobs: [-0.5, -0.1] });
  });
  it.each<[string, unknown, RegExp]>([
    ['no prompt ids', { ...good, prompt_token_ids: undefined }, /no prompt_token_ids .*return_token_ids/],
    ['no generation ids', { ...good, choices: [{ ...good.choices[0], token_ids: undefined }] }, /no choices\[0\]\.token_ids/],
    ['no logprobs', { ...good, choices: [{ ...good.choices[0], logprobs: null }] }, /no choices\[0\]\.logprobs\.content/],
    ['counts differ', { ...good, choices: [{ ...good.choices[0], token_ids: [3] }] }, /1 generated token ids but 2 logprobs/],
    ['two choices', { ...good, choices: [good.choices[0], good.choices[0]] }, /2 choices/],
  ])('refuses an answer with %s', (_name, body, message) => {
    const out = tokensOfChatAnswer(body);
    expect('error' in out && out.error).toMatch(message);
  });
});
