// The openhands agent's pure parts: its --json events as ATIF, the settings and MCP files it is given.
import { describe, expect, it } from 'vitest';
import { openhandsAgentSettings, openhandsAnswers, openhandsMcpConfig } from '../../src/agents/installed/openhands.ts';
import { INSTALLED_AGENTS } from '../../src/agents/index.ts';
import type { AgentRun } from '../../src/agents/installed/types.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';

/** Events as the CLI prints them (one `model_dump()` a line), with a banner line it also prints. */
const EVENTS = [
  'OpenHands CLI 1.16.0',
  { kind: 'MessageEvent', source: 'user', timestamp: '2026-12-02T01:00:00.000001', llm_message: { role: 'user', content: [{ type: 'text', text: 'Write hello.txt' }] } },
  {
    kind: 'ActionEvent', source: 'agent', timestamp: '2026-12-02T01:00:01.5', thought: [{ type: 'text', text: 'Writing the greeting.' }],
    action: { kind: 'TerminalAction', command: 'echo hi > hello.txt', is_input: false }, tool_name: 'terminal', tool_call_id: 'call_1',
    tool_call: { id: 'call_1', name: 'terminal', arguments: '{"command": "echo hi > hello.txt", "security_risk": "LOW"}', origin: 'completion' }, llm_response_id: 'r1',
  },
  { kind: 'ObservationEvent', source: 'environment', tool_name: 'terminal', tool_call_id: 'call_1', observation: { kind: 'TerminalObservation', content: [{ type: 'text', text: '\u001b[?2004l(exit code 0)\u001b[?2004h' }] }, action_id: 'a1' },
  {
    kind: 'ActionEvent', source: 'agent', thought: [], action: { kind: 'FileEditorAction', command: 'view', path: '/app/hello.txt' }, tool_name: 'file_editor', tool_call_id: 'call_2',
    tool_call: { id: 'call_2', name: 'file_editor', arguments: 'not json', origin: 'completion' }, llm_response_id: 'r2',
  },
  { kind: 'AgentErrorEvent', source: 'agent', tool_name: 'file_editor', tool_call_id: 'call_2', error: 'no such file' },
  { kind: 'MessageEvent', source: 'agent', llm_message: { role: 'assistant', content: [{ type: 'text', text: 'hello.txt is written.' }] } },
  { kind: 'ConversationErrorEvent', source: 'environment', code: 'LLMError', detail: 'upstream said no' },
].map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join('\n');

const run: AgentRun = {
  gatewayUrl: 'http://gw:1', token: 'berth-tok', model: 'gpt-4.1-mini', provider: 'openai', instructionFile: '/logs/agent/instruction.md', home: '/logs/agent/home',
  workdir: '/app', args: { disable_tool_calls: 'false' }, mcpServers: [], skillsDir: null,
};

describe('openhands --json events as ATIF', () => {
  it('one step per model response with its tool calls and their results, agent messages as steps, errors as notes', () => {
    const { answers, errors } = openhandsAnswers(EVENTS);
    expect(answers).toEqual([
      { text: 'Writing the greeting.', timestamp: '2026-12-02T01:00:01.500Z', toolCalls: [{ id: 'call_1', name: 'terminal', arguments: { command: 'echo hi > hello.txt', security_risk: 'LOW' }, output: '(exit code 0)' }] },
      { text: '', toolCalls: [{ id: 'call_2', name: 'file_editor', arguments: { command: 'view', path: '/app/hello.txt' }, output: 'no such file' }] },
      { text: 'hello.txt is written.', toolCalls: [] },
    ]);
    expect(errors).toEqual(['upstream said no']);
    const { trajectory, responseText } = INSTALLED_AGENTS.openhands.transcript({ stdout: EVENTS, files: {}, sessionId: 's', instruction: 'Write hello.txt', model: 'm' });
    expect(validateAtif(trajectory)).toEqual({ ok: true });
    expect(responseText).toBe('hello.txt is written.');
    expect(trajectory.notes).toBe('upstream said no');
  });

  it('an empty or cut-off log is an empty transcript, not a failure', () => {
    expect(openhandsAnswers('')).toEqual({ answers: [], errors: [] });
    expect(openhandsAnswers('{"kind": "ActionEvent", "tool_na').answers).toEqual([]);
  });
});

describe('what openhands is given', () => {
  it.each<{ provider: 'openai' | 'anthropic'; args: Record<string, string>; llm: Record<string, unknown> }>([
    { provider: 'openai', args: {}, llm: { model: 'openai/gpt-4.1-mini', base_url: 'http://gw:1/v1', usage_id: 'agent' } },
    { provider: 'anthropic', args: { reasoning_effort: 'high', temperature: '0.2', top_p: '1', max_output_tokens: '4096', disable_tool_calls: 'true' },
      llm: { model: 'anthropic/gpt-4.1-mini', base_url: 'http://gw:1', usage_id: 'agent', reasoning_effort: 'high', temperature: 0.2, top_p: 1, max_output_tokens: 4096, native_tool_calling: false } },
  ])('agent_settings.json for $provider carries the model at the gateway and the options, never the token', ({ provider, args, llm }) => {
    const settings = openhandsAgentSettings({ ...run, provider, args: { disable_tool_calls: 'false', ...args } });
    expect(settings).toEqual({ llm, tools: [] });
    expect(JSON.stringify(settings)).not.toContain('berth-tok');
  });

  it('refuses an option that is not a number where one is needed, naming it', () => {
    expect(() => openhandsAgentSettings({ ...run, args: { temperature: 'warm' } })).toThrow('--agent-arg temperature=warm: openhands wants a number');
  });

  it('mcp.json names stdio servers by command and remote ones by URL and transport', () => {
    expect(openhandsMcpConfig({
      ...run,
      mcpServers: [
        { name: 'files', transport: 'stdio', command: 'mcp-files', args: ['--root', '/app'], url: null },
        { name: 'search', transport: 'sse', url: 'http://mcp:1/sse', command: null, args: [] },
        { name: 'db', transport: 'streamable-http', url: 'http://mcp:2/mcp', command: null, args: [] },
      ],
    })).toEqual({
      mcpServers: {
        files: { command: 'mcp-files', args: ['--root', '/app'], transport: 'stdio' },
        search: { url: 'http://mcp:1/sse', transport: 'sse' },
        db: { url: 'http://mcp:2/mcp', transport: 'http' },
      },
    });
  });
});
