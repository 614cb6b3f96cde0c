import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { responseFromText, responseText } from '../../src/verify/response.ts';

describe('responseFromText (docs/design.md section 7 "Formats")', () => {
  it('builds the Responses-API shape', () => {
    expect(responseFromText('42')).toEqual({
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '42' }] }],
    });
  });

  it('round-trips any text through responseText, also through JSON', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(responseText(responseFromText(text))).toBe(text);
        expect(responseText(JSON.parse(JSON.stringify(responseFromText(text))))).toBe(text);
      }),
    );
  });
});

describe('responseText: text of the last assistant message, "" if none', () => {
  const msg = (role: string, ...texts: string[]) => ({
    type: 'message',
    role,
    content: texts.map((text) => ({ type: 'output_text', text })),
  });
  const table: Array<[string, unknown, string]> = [
    ['undefined', undefined, ''],
    ['null', null, ''],
    ['a string', 'hello', ''],
    ['no output key', {}, ''],
    ['output not a list', { output: 'x' }, ''],
    ['empty output', { output: [] }, ''],
    ['only a user message', { output: [msg('user', 'q')] }, ''],
    ['last of several assistant messages', { output: [msg('assistant', 'a'), msg('assistant', 'b')] }, 'b'],
    ['assistant message before a tool call', { output: [msg('assistant', 'a'), { type: 'function_call', name: 'f' }] }, 'a'],
    ['parts joined', { output: [msg('assistant', 'x', 'y')] }, 'xy'],
    ['non-text parts skipped', { output: [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }, { type: 'output_text', text: 'ok' }] }] }, 'ok'],
    ['string content', { output: [{ type: 'message', role: 'assistant', content: 'plain' }] }, 'plain'],
    ['last assistant message is empty', { output: [msg('assistant', 'a'), msg('assistant')] }, ''],
    ['reasoning item is not a message', { output: [msg('assistant', 'a'), { type: 'reasoning', role: 'assistant', content: [] }] }, 'a'],
  ];
  it.each(table)('%s', (_name, response, expected) => {
    expect(responseText(response)).toBe(expected);
  });
});
