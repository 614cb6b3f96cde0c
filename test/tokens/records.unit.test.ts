// What a token record keeps of its prompt: the messages after the last assistant message (issue 41, a NeMo Gym verify
// response's function_call_output items come from them).
import { describe, expect, it } from 'vitest';
import { inputItemsOf } from '../../src/tokens/index.ts';

describe('inputItemsOf', () => {
  const system = { role: 'system', content: 'You are an agent.' };
  const user = { role: 'user', content: 'List the files.' };
  const assistant = { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'call_1' }] };
  const tool = { role: 'tool', content: 'a.txt', tool_call_id: 'call_1' };
  it.each([
    ['the first call: its whole prompt', [system, user], [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'List the files.' }]],
    ['after a tool call: the tool output it answers', [system, user, assistant, tool], [{ role: 'tool', content: 'a.txt', tool_call_id: 'call_1' }]],
    ['a tool output and a new user turn', [user, assistant, tool, { role: 'user', content: 'Now count them.' }],
      [{ role: 'tool', content: 'a.txt', tool_call_id: 'call_1' }, { role: 'user', content: 'Now count them.' }]],
    ['a prompt that ends with the assistant: nothing new', [user, assistant], []],
  ])('%s', (_name, messages, expected) => {
    expect(inputItemsOf(messages)).toEqual(expected);
  });
});
