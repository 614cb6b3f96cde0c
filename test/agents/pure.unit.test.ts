import { describe, expect, it } from 'vitest';
import type { ChatMessage, ConversationRecord } from '../../src/agents/index.ts';
import { AGENT_NAMES } from '../../src/config/agents.ts';
import {
  AgentConfigError,
  apiKeyEnvOf,
  callBudgetOf,
  detachedKey,
  harnessFor,
  HARNESS_NAMES,
  nextActionOf,
  openAiOptionsFromArgs,
} from '../../src/agents/index.ts';

describe('call limit', () => {
  it('counts calls left and refuses a limit below 1', () => {
    expect(callBudgetOf(0, 2)).toEqual({ made: 0, left: 2, reached: false });
    expect(callBudgetOf(2, 2)).toEqual({ made: 2, left: 0, reached: true });
    expect(() => callBudgetOf(0, 0)).toThrow(/at least 1/);
  });
});

describe('settings', () => {
  it('refuses an API key passed where the variable name belongs, without echoing it', () => {
    expect(apiKeyEnvOf({})).toBe('OPENAI_API_KEY');
    expect(apiKeyEnvOf({ apiKey: 'MY_KEY' })).toBe('MY_KEY');
    const err = (() => {
      try {
        apiKeyEnvOf({ apiKeyEnv: 'sk-live-abc123' });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(AgentConfigError);
    expect(err?.message).not.toContain('sk-live-abc123');
  });

  it('reads the openai options from --agent-arg, falling back to the worker environment', () => {
    expect(openAiOptionsFromArgs({ base_url: 'http://x/v1', model: 'm', max_calls: '3' }, {})).toMatchObject({ baseUrl: 'http://x/v1', model: 'm', maxCalls: 3 });
    expect(openAiOptionsFromArgs({}, { OPENAI_BASE_URL: 'http://y/v1', OPENAI_MODEL: 'n' })).toMatchObject({ baseUrl: 'http://y/v1', model: 'n' });
    expect(openAiOptionsFromArgs({ base_url: 'http://x/v1', model: 'm', temperature: '0' }, {}).extraBody).toEqual({ temperature: 0 });
    expect(() => openAiOptionsFromArgs({ model: 'm' }, {})).toThrow(/base_url/);
    expect(() => openAiOptionsFromArgs({ base_url: 'http://x', model: 'm', max_calls: 'lots' }, {})).toThrow(/max_calls=lots/);
  });

  it('knows the four built-in harnesses and the nine installed agents, and names them when asked for another', () => {
    expect(HARNESS_NAMES.sort()).toEqual(['aider', 'claude-code', 'cline', 'codex', 'command', 'gemini-cli', 'mini-swe-agent', 'nop', 'openai', 'opencode', 'openhands', 'oracle', 'qwen-code']);
    for (const n of HARNESS_NAMES) expect(harnessFor(n).name).toBe(n);
    expect(() => harnessFor('claude')).toThrow(/unknown agent "claude": choose one of/);
  });

  it('has exactly the agents the CLI and the client accept (AGENT_NAMES)', () => {
    expect([...HARNESS_NAMES].sort()).toEqual([...AGENT_NAMES].sort());
  });

  it('makes marker keys the sandbox accepts from any run key', () => {
    expect(detachedKey('oracle', 'a1b2-c3/t1')).toBe('oracle-a1b2-c3_t1');
  });
});

describe('next action of an openai turn', () => {
  const at = '2026-11-30T05:00:00.000Z';
  const rec = (message: ChatMessage): ConversationRecord => ({ message, at });
  const user = rec({ role: 'user', content: 'go' });
  const calls = (...ids: string[]): ConversationRecord =>
    rec({ role: 'assistant', content: null, tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'bash', arguments: '{"command":"true"}' } })) });
  const result = (id: string): ConversationRecord => rec({ role: 'tool', tool_call_id: id, content: 'exit code: 0' });
  const answer = rec({ role: 'assistant', content: 'done' });

  it.each([
    ['a fresh conversation asks the model', [user], 5, { kind: 'call_model', callNumber: 1 }],
    ['unanswered calls run first', [user, calls('a', 'b'), result('a')], 5, { kind: 'run_tools', calls: [expect.objectContaining({ id: 'b' })] }],
    ['answered calls ask the model again', [user, calls('a'), result('a')], 5, { kind: 'call_model', callNumber: 2 }],
    ['a reply without tool calls ends the turn', [user, calls('a'), result('a'), answer], 5, { kind: 'done', reason: 'answered' }],
    ['the limit ends the turn once the calls are answered', [user, calls('a'), result('a')], 1, { kind: 'done', reason: 'call_limit' }],
    ['the limit still lets the last calls run', [user, calls('a')], 1, { kind: 'run_tools', calls: [expect.objectContaining({ id: 'a' })] }],
  ] as const)('%s', (_name, records, maxCalls, expected) => {
    expect(nextActionOf(records, maxCalls)).toEqual(expected);
  });
});
