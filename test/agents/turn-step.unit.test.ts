import { describe, expect, it } from 'vitest';
import { tallyOf, turnStepOf, type ConversationRecord, type GatewayCallNote, type TurnStep } from '../../src/agents/index.ts';

const AT = '2025-01-01T00:00:00.000Z';
const opening: ConversationRecord[] = [
  { message: { role: 'system', content: 'sys' }, at: AT },
  { message: { role: 'user', content: 'do it' }, at: AT },
];
const answer = (ids: string[], usage = { promptTokens: 10, completionTokens: 2 }, gateway?: GatewayCallNote): ConversationRecord => ({
  message: ids.length > 0
    ? { role: 'assistant', content: null, tool_calls: ids.map((id) => ({ id, type: 'function' as const, function: { name: 'bash', arguments: '{"command":"true"}' } })) }
    : { role: 'assistant', content: 'done' },
  at: AT, usage, ...(gateway ? { gateway } : {}),
});
const output = (id: string): ConversationRecord => ({ message: { role: 'tool', tool_call_id: id, content: 'exit code: 0' }, at: AT });

const NOW = 1_000_000;
const limits = { maxCalls: 3, toolTimeoutSec: 600, deadline: NOW + 60_000 };
const limit = { kind: 'agent:max_tokens', reason: 'the episode used 30 model tokens, past its limit of 20 (--max-tokens)' };

describe('the durable openai turn: its next step, from the conversation file alone', () => {
  const cases: Array<[string, ConversationRecord[], Partial<typeof limits>, number, TurnStep]> = [
    ['a fresh turn calls the model', opening, {}, NOW, { kind: 'call_model' }],
    ['an answer with a tool call runs it, within what is left of the budget', [...opening, answer(['c1'])], {}, NOW, { kind: 'run_tool', call: { id: 'c1', name: 'bash', arguments: { command: 'true' } }, timeoutSec: 60 }],
    ['the tool timeout caps a long budget', [...opening, answer(['c1'])], { toolTimeoutSec: 5 }, NOW, { kind: 'run_tool', call: { id: 'c1', name: 'bash', arguments: { command: 'true' } }, timeoutSec: 5 }],
    ['a resumed attempt runs only the calls without a recorded output', [...opening, answer(['c1', 'c2']), output('c1')], {}, NOW, { kind: 'run_tool', call: { id: 'c2', name: 'bash', arguments: { command: 'true' } }, timeoutSec: 60 }],
    ['every output recorded: the model is asked again', [...opening, answer(['c1']), output('c1')], {}, NOW, { kind: 'call_model' }],
    ['an answer without a tool call ends the turn', [...opening, answer(['c1']), output('c1'), answer([])], {}, NOW, { kind: 'stop', stopReason: null }],
    ['the call limit ends the turn after the last call\'s tools ran', [...opening, answer(['c1']), output('c1')], { maxCalls: 1 }, NOW, { kind: 'stop', stopReason: 'the turn reached its limit of 1 model calls' }],
    ['the budget spent ends the turn before another call', [...opening, answer(['c1']), output('c1')], {}, NOW + 60_000, { kind: 'stop', stopReason: 'the turn ran out of its time budget' }],
    ['less than a second left for a tool call ends the turn', [...opening, answer(['c1'])], {}, NOW + 59_500, { kind: 'stop', stopReason: 'the turn ran out of its time budget' }],
    ['time held by a drain moves the budget on', [...opening, answer(['c1'], undefined, { held_ms: 130_000 }), output('c1')], {}, NOW + 120_000, { kind: 'call_model' }],
    ['a call that passed a token limit ends the turn before its tools run', [...opening, answer(['c1'], undefined, { limit })], {}, NOW, { kind: 'stop', stopReason: limit.reason, outcome: limit }],
  ];
  it.each(cases)('%s', (_name, records, over, now, expected) => {
    expect(turnStepOf(records, { ...limits, ...over }, now)).toEqual(expected);
  });
});

describe('what the turn spent, summed from its answers', () => {
  const cases: Array<[string, ConversationRecord[], ReturnType<typeof tallyOf>]> = [
    ['nothing yet', opening, { calls: 0, promptTokens: 0, completionTokens: 0, heldMs: 0 }],
    ['answers without a gateway note (the in-process loop)', [...opening, answer(['c1']), output('c1'), answer([], { promptTokens: 20, completionTokens: 3 })], { calls: 2, promptTokens: 30, completionTokens: 5, heldMs: 0 }],
    ['the gateway\'s cached tokens, cost and held time', [...opening, answer(['c1'], undefined, { cached_tokens: 4, cost_usd: 0.5, held_ms: 100 }), output('c1'), answer([], undefined, { cached_tokens: 0, held_ms: 20 })],
      { calls: 2, promptTokens: 20, completionTokens: 4, cachedTokens: 4, costUsd: 0.5, heldMs: 120 }],
  ];
  it.each(cases)('%s', (_name, records, expected) => {
    expect(tallyOf(records)).toEqual(expected);
  });
});
