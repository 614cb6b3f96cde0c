// The new installed agents' own rules (issue 26), table-driven: --agent-arg checked against each agent's documented
// options, the config files written for the gateway, the task's MCP servers in each agent's own shape, each agent's
// log (as the real agent printed it in the end-to-end runs) turned into ATIF with its tool calls; and, against the
// real engine, a task image lacking the runtime an agent needs refused before anything is fetched.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentArgsOf, AgentConfigError, AgentInstallFailed, ensureLayer, INSTALLED_AGENTS } from '../../src/agents/index.ts';
import { probeGlibc } from '../../src/agents/installed/layer.ts';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import type { AgentRun } from '../../src/agents/index.ts';
import { opencodeConfig } from '../../src/agents/installed/opencode.ts';
import { geminiSettings } from '../../src/agents/installed/gemini-cli.ts';
import { clineMcpSettings } from '../../src/agents/installed/cline.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { buildTestImage, NO_LIBSTDCXX, removeTestImage } from '../helpers/docker.ts';

const run = (over: Partial<AgentRun> = {}): AgentRun => ({
  gatewayUrl: 'http://172.16.0.1:4000', token: 'berth-t', model: 'm-1', provider: 'openai', instructionFile: '/logs/agent/instruction.md',
  home: '/logs/agent/home', workdir: '/app', args: {}, mcpServers: [], skillsDir: null, ...over,
});

const MCP = [
  { name: 'files', transport: 'stdio' as const, url: null, command: 'mcp-files', args: ['--root', '/app'] },
  { name: 'web', transport: 'streamable-http' as const, url: 'http://mcp:8000/mcp', command: null, args: [] },
  { name: 'old', transport: 'sse' as const, url: 'http://mcp:9000/sse', command: null, args: [] },
];

describe('--agent-arg against an agent\'s options', () => {
  it.each([
    ['gemini-cli', {}, { disable_web_search: 'false' }],
    ['gemini-cli', { reasoning_effort: 'high', model: 'ignored' }, { disable_web_search: 'false', reasoning_effort: 'high' }],
    ['cline', { thinking: 'low' }, { thinking: 'low' }],
    ['mini-swe-agent', {}, { cost_limit: '0' }],
  ] as const)('%s %j → %j', (name, given, want) => {
    expect(agentArgsOf(INSTALLED_AGENTS[name], given)).toEqual(want);
  });

  it.each([
    ['opencode', { turbo: '1' }, /--agent-arg turbo: opencode has no such option; it takes variant, agent, opencode_config/],
    ['cline', { thinking: 'huge' }, /--agent-arg thinking=huge: cline takes one of none, low, medium, high, xhigh/],
  ] as const)('%s refuses %j, naming what it takes', (name, given, message) => {
    expect(() => agentArgsOf(INSTALLED_AGENTS[name], given)).toThrow(AgentConfigError);
    expect(() => agentArgsOf(INSTALLED_AGENTS[name], given)).toThrow(message);
  });

  it('every installed agent documents its options with a description', () => {
    for (const a of Object.values(INSTALLED_AGENTS)) {
      expect(a.options?.length ?? 0, a.name).toBeGreaterThan(0);
      for (const o of a.options ?? []) expect(o.description.length, `${a.name} ${o.name}`).toBeGreaterThan(10);
    }
  });
});

describe('config files for the gateway and the task\'s MCP servers', () => {
  it('opencode: provider berth at the gateway, the token by env reference, MCP local/remote, an overlay merged in', () => {
    const c = opencodeConfig(run({ mcpServers: MCP, args: { opencode_config: '{"provider":{"berth":{"options":{"timeout":5}}}}' } }));
    expect(c).toMatchObject({
      model: 'berth/m-1',
      provider: { berth: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://172.16.0.1:4000/v1', apiKey: '{env:BERTH_GATEWAY_TOKEN}', timeout: 5 }, models: { 'm-1': {} } } },
      mcp: {
        files: { type: 'local', command: ['mcp-files', '--root', '/app'] },
        web: { type: 'remote', url: 'http://mcp:8000/mcp', oauth: false },
        old: { type: 'remote', url: 'http://mcp:9000/sse' },
      },
    });
    expect(JSON.stringify(c)).not.toContain('berth-t');
    expect(opencodeConfig(run({ provider: 'anthropic' }))).toMatchObject({ provider: { berth: { npm: '@ai-sdk/anthropic' } } });
  });

  it('gemini-cli: API-key auth chosen, MCP servers as command/httpUrl/url, a reasoning effort as a model alias', () => {
    const s = geminiSettings(run({ mcpServers: MCP, args: { reasoning_effort: 'low' } }));
    expect(s).toMatchObject({
      security: { auth: { selectedType: 'gemini-api-key' } },
      mcpServers: { files: { command: 'mcp-files', args: ['--root', '/app'] }, web: { httpUrl: 'http://mcp:8000/mcp' }, old: { url: 'http://mcp:9000/sse' } },
      modelConfigs: { customAliases: { 'berth-m-1-low': { modelConfig: { model: 'm-1', generateContentConfig: { thinkingConfig: { thinkingLevel: 'LOW' } } } } } },
    });
  });

  it('cline: MCP servers in the shape `cline mcp add --yes` writes', () => {
    expect(clineMcpSettings(run({ mcpServers: MCP }))).toEqual({
      mcpServers: {
        files: { transport: { type: 'stdio', command: 'mcp-files', args: ['--root', '/app'] } },
        web: { transport: { type: 'streamableHttp', url: 'http://mcp:8000/mcp' } },
        old: { transport: { type: 'sse', url: 'http://mcp:9000/sse' } },
      },
    });
  });

  it('a config overlay that is not a JSON object is refused, naming the option', () => {
    expect(() => geminiSettings(run({ args: { settings: '[1]' } }))).toThrow(/--agent-arg settings: gemini-cli wants a JSON object/);
  });
});

// Lines as each agent printed them in this machine's end-to-end runs (trimmed to the fields read).
const LOGS = {
  opencode: [
    { type: 'step_start', timestamp: 1796160988791, part: { type: 'step-start' } },
    { type: 'text', part: { type: 'text', text: 'Writing the greeting.' } },
    { type: 'tool_use', part: { type: 'tool', tool: 'bash', callID: 'call_2', state: { status: 'completed', input: { command: 'echo hi > hello.txt' }, output: '(no output)' } } },
    { type: 'step_finish', part: { type: 'step-finish', reason: 'tool-calls' } },
    { type: 'step_start', part: {} },
    { type: 'text', part: { type: 'text', text: 'hello.txt is written.' } },
    { type: 'step_finish', part: { reason: 'stop' } },
  ],
  'gemini-cli': [
    { type: 'init', session_id: 's', model: 'm-1' },
    { type: 'message', role: 'user', content: 'Write hello.txt' },
    { type: 'message', role: 'assistant', content: 'Writing the greeting.', delta: true },
    { type: 'tool_use', tool_name: 'run_shell_command', tool_id: 't1', parameters: { command: 'echo hi > hello.txt' } },
    { type: 'tool_result', tool_id: 't1', status: 'success', output: '' },
    { type: 'message', role: 'assistant', content: 'hello.txt is ', delta: true },
    { type: 'message', role: 'assistant', content: 'written.', delta: true },
    { type: 'result', status: 'success', stats: {} },
  ],
  'qwen-code': [
    { type: 'system', subtype: 'init' },
    { type: 'assistant', message: { id: 'a1', content: [{ type: 'text', text: 'Writing the greeting.' }] } },
    { type: 'assistant', message: { id: 'a2', content: [{ type: 'tool_use', id: 'call_3', name: 'run_shell_command', input: { command: 'echo hi > hello.txt' } }] } },
    { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'call_3', content: 'Exit Code: 0' }] } },
    { type: 'assistant', message: { id: 'a3', content: [{ type: 'text', text: 'hello.txt is written.' }] } },
    { type: 'result', subtype: 'success', result: 'hello.txt is written.' },
  ],
  cline: [
    { type: 'agent_event', ts: '2026-12-01T22:04:48.938Z', event: { type: 'iteration_start', iteration: 1 } },
    { type: 'agent_event', event: { type: 'content_end', contentType: 'text', text: 'Writing the greeting.' } },
    { type: 'agent_event', event: { type: 'content_start', contentType: 'tool', toolName: 'run_commands', toolCallId: 'call_1', input: { commands: ['echo hi > hello.txt'] } } },
    { type: 'agent_event', event: { type: 'content_end', contentType: 'tool', toolName: 'run_commands', toolCallId: 'call_1', output: [{ result: '', success: true }] } },
    { type: 'agent_event', event: { type: 'iteration_start', iteration: 2 } },
    { type: 'agent_event', event: { type: 'content_end', contentType: 'text', text: 'hello.txt is written.' } },
    { type: 'run_result', finishReason: 'completed', text: 'hello.txt is written.' },
  ],
} as const;

describe.each(Object.entries(LOGS))('%s log → ATIF', (name, lines) => {
  it('a user step, the tool call with its output, and the final answer', () => {
    const stdout = ['a banner line that is not JSON', ...lines.map((l) => JSON.stringify(l))].join('\n');
    const { trajectory, responseText } = INSTALLED_AGENTS[name as keyof typeof LOGS].transcript({ stdout, files: {}, sessionId: 'sess', instruction: 'Write hello.txt', model: 'm-1' });
    expect(validateAtif(trajectory)).toEqual({ ok: true });
    expect(trajectory.steps[0]).toMatchObject({ source: 'user', message: 'Write hello.txt' });
    const calls = trajectory.steps.flatMap((s) => s.tool_calls ?? []);
    expect(calls).toHaveLength(1);
    expect(JSON.stringify(calls[0]!.arguments)).toContain('echo hi > hello.txt');
    const results = trajectory.steps.flatMap((s) => s.observation?.results ?? []);
    expect(results.map((r) => r.source_call_id)).toEqual([calls[0]!.tool_call_id]);
    expect(responseText).toBe('hello.txt is written.');
  });
});

describe('a missing runtime is found before anything is fetched or built', () => {
  const tag = `berth-test-no-libstdcxx:${randomBytes(4).toString('hex')}`;
  const noPython = `berth-test-no-python:${randomBytes(4).toString('hex')}`;
  const docker = new DockerSandboxProvider();
  beforeAll(() => {
    buildTestImage(tag, NO_LIBSTDCXX);
    buildTestImage(noPython, 'FROM berth-base:bookworm\nRUN rm -f /usr/bin/python3*\n');
  }, 120_000);
  afterAll(() => { for (const image of [tag, noPython]) removeTestImage(image); });

  it('a JavaScript agent on an image without libstdc++ fails its install naming what is missing, with nothing fetched', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'berth-no-runtime-'));
    const err = await ensureLayer(docker, INSTALLED_AGENTS['gemini-cli'], tag, cache).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AgentInstallFailed);
    expect((err as Error).message).toMatch(/gemini-cli 0\.61\.0 needs glibc >= 2\.28 and libstdc\+\+6 in the task's image, which has no libstdc\+\+\.so\.6/);
    expect(readdirSync(cache)).toEqual([]);
  }, 120_000);

  it('a PyPI agent on an image without python3 fails its install naming what it needs, with nothing fetched', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'berth-no-python-'));
    const err = await ensureLayer(docker, INSTALLED_AGENTS.aider, noPython, cache).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AgentInstallFailed);
    expect((err as Error).message).toBe("aider 0.86.2 needs Python >= 3.10 in the task's image, which has no working python3 (or not glibc): add python3 to the task's image or pick another agent");
    expect(readdirSync(cache)).toEqual([]);
  }, 120_000);

  it('the same image reports its glibc, and the base image has both', async () => {
    expect(await probeGlibc(docker, tag)).toEqual({ glibcMinor: 36, libstdcxx: false });
    expect(await probeGlibc(docker, 'berth-base:bookworm')).toEqual({ glibcMinor: 36, libstdcxx: true });
  }, 120_000);
});
