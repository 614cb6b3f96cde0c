// The task's MCP servers and skills reach the installed agents in their own configuration (issue 22;
// Task Folder Format § [environment] mcp_servers and skills_dir): claude-code gets `--mcp-config` with each server
// in its own transport names and the skills in ~/.claude/skills; codex gets `[mcp_servers.<name>]` in
// $CODEX_HOME/config.toml and the skills in $CODEX_HOME/skills; mini-swe-agent has no MCP client (none is written).
// What each agent receives is read inside the running sandbox while the agent runs. Then each agent that reads MCP
// configuration (claude-code, and issue 26's opencode, gemini-cli, qwen-code, cline and openhands) is asked by the scripted
// model to call the task's stdio MCP server's tool (a real server, in the sandbox, logging every request it gets):
// the call arrives at the server and the tool's answer reaches the agent's ATIF trajectory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { AgentName, ResultRow } from '../../src/workflows/types.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { WRITE_HELLO } from './fake-vendors.ts';
import { docker, useInstalledWorld } from './installed-run.ts';
import { mcpStdioServer } from '../helpers/mcp-stdio-server.ts';

const REAL_KEY = 'sk-berth-test-REAL-mcp-8b1c';
const ANSWER = 'berth-mcp-answer-42';
const INSTALL_TIMEOUT = 900_000;
/** openhands' first install builds its CPython on the host (openhands.test.ts). */
const OPENHANDS_INSTALL_TIMEOUT = 3_000_000;
/** Where the MCP server logs each request it gets (method, tool name), inside the sandbox. */
const SERVER_LOG = '/tmp/berth-mcp-requests.jsonl';

// MCP's stdio transport (test/helpers/mcp-stdio-server.ts): one tool, `lookup`, answering ANSWER.
const SERVER = mcpStdioServer(ANSWER, SERVER_LOG);

const SERVERS = {
  stdio: ['[[environment.mcp_servers]]', 'name = "vault"', 'transport = "stdio"', 'command = "python3"', 'args = ["/app/mcp_server.py"]'],
  http: ['[[environment.mcp_servers]]', 'name = "remote"', 'transport = "streamable-http"', 'url = "http://localhost:8765/mcp"'],
  sse: ['[[environment.mcp_servers]]', 'name = "old"', 'transport = "sse"', 'url = "http://localhost:8766/sse"'],
};

function task(id: string, servers: string[][]): Record<string, string> {
  return {
    [`${id}/task.toml`]: ['[environment]', 'docker_image = "berth-base:bookworm"', 'workdir = "/app"', 'skills_dir = "/opt/task-skills"',
      ...servers.flat(), '[agent]', 'timeout_sec = 600', '[verifier]', 'timeout_sec = 60', ''].join('\n'),
    [`${id}/instruction.md`]: 'Write "Hello, world!" to hello.txt.\n',
    [`${id}/environment/mcp_server.py`]: SERVER,
    [`${id}/environment/skills/greeting/SKILL.md`]: '---\nname: greeting\ndescription: How to greet.\n---\nSay hello.\n',
    [`${id}/tests/test.sh`]: '#!/bin/bash\n[ "$(cat /app/hello.txt)" = "Hello, world!" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
  };
}

const dataset = writeDataset({ ...task('mcp-stdio', [SERVERS.stdio]), ...task('mcp-all', [SERVERS.stdio, SERVERS.http, SERVERS.sse]) });
const world = useInstalledWorld('installed-mcp', REAL_KEY);

/** Inside the batch's running sandbox, as root: `script`'s stdout. */
async function inSandbox(batchId: string, script: string): Promise<string> {
  const [c] = await docker.listContainers({ filters: { label: [`berth.batch=${batchId}`] } });
  if (!c) throw new Error(`no running sandbox of batch ${batchId}`);
  return execFileSync('docker', ['exec', c.Id, 'sh', '-c', script], { encoding: 'utf8' });
}

/**
 * Runs `taskId` with `agent`, reading `script`'s output inside the sandbox while the agent runs (before its last
 * answer; not before `ready` says so).
 */
async function runWatching(agent: AgentName, model: string, taskId: string, script: string, ready = () => true): Promise<{ row: ResultRow; seen: string }> {
  const { fake, cluster } = world;
  const batchId = `mcp-${agent}-${Date.now().toString(36)}`;
  let seen: Promise<string> = Promise.resolve('');
  let looked = false;
  fake.beforeFinish = async () => {
    if (looked || !ready()) return;
    looked = true;
    seen = inSandbox(batchId, script).catch((e: unknown) => `failed: ${String(e)}`);
    await seen;
  };
  try {
    const handle = await startBatch({
      dataset, agent, model, batchId, client: cluster.client, taskQueue: cluster.taskQueue, taskFilter: (id) => id === taskId,
      resultsDir: mkdtempSync(join(tmpdir(), 'berth-installed-mcp-')),
    });
    const row = (await handle.wait()).rows[0]!;
    await handle.close();
    return { row, seen: await seen };
  } finally {
    fake.beforeFinish = undefined;
  }
}

describe('MCP servers and skills in the installed agents\' own configuration', () => {
  it('claude-code: --mcp-config with the stdio server, skills in ~/.claude/skills, and the MCP tool\'s answer in its trajectory', async () => {
    world.fake.command = WRITE_HELLO;
    world.fake.firstTool = 'mcp__vault__lookup';
    try {
      const { row, seen } = await runWatching('claude-code', 'anthropic/claude-sonnet-4-5', 'mcp-stdio',
        'cat /logs/agent/home/.claude/berth-mcp.json; echo; echo =====; cat /logs/agent/home/.claude/skills/greeting/SKILL.md; echo =====; ' +
        'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline 2>/dev/null | grep -o -- "--mcp-confi[g] [^ ]*"; done | sort -u');
      expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, failure_kind: null });
      const [config, skill, flag] = seen.split('=====\n');
      expect(JSON.parse(config!)).toEqual({ mcpServers: { vault: { type: 'stdio', command: 'python3', args: ['/app/mcp_server.py'] } } });
      expect(skill).toContain('Say hello.');
      expect(flag!.trim()).toBe('--mcp-config /logs/agent/home/.claude/berth-mcp.json');
      const trajectory = readFileSync(join(row.logs_dir!, 'turn-1', 'agent', 'trajectory.json'), 'utf8');
      const calls = (JSON.parse(trajectory) as { steps: Array<{ tool_calls?: Array<{ function_name: string }>; observation?: unknown }> }).steps
        .flatMap((s) => (s.tool_calls ?? []).map((c) => ({ name: c.function_name, observation: JSON.stringify(s.observation ?? null) })));
      const mcpCall = calls.find((c) => c.name === 'mcp__vault__lookup');
      expect(mcpCall, trajectory).toBeDefined();
      expect(mcpCall!.observation).toContain(ANSWER);
    } finally {
      world.fake.firstTool = undefined;
    }
  }, INSTALL_TIMEOUT);

  it('codex: [mcp_servers.*] in $CODEX_HOME/config.toml (stdio and streamable HTTP; no client for sse) and skills in $CODEX_HOME/skills', async () => {
    world.fake.command = WRITE_HELLO;
    const { row, seen } = await runWatching('codex', 'openai/gpt-5-codex', 'mcp-all',
      'cat /logs/agent/home/.codex/config.toml; echo =====; cat /logs/agent/home/.codex/skills/greeting/SKILL.md');
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, failure_kind: null });
    const [config, skill] = seen.split('=====\n');
    expect(config).toBe('[mcp_servers."vault"]\ncommand = "python3"\nargs = ["/app/mcp_server.py"]\n\n[mcp_servers."remote"]\nurl = "http://localhost:8765/mcp"\n');
    expect(skill).toContain('Say hello.');
  }, INSTALL_TIMEOUT);
});

interface Step { tool_calls?: Array<{ tool_call_id: string; function_name: string }>; observation?: { results?: Array<{ source_call_id?: string; content?: unknown }> } }

/** Each MCP tool call in a turn's ATIF trajectory, with what its result says. */
function callsIn(row: ResultRow): Array<{ name: string; result: string }> {
  const steps = (JSON.parse(readFileSync(join(row.logs_dir!, 'turn-1', 'agent', 'trajectory.json'), 'utf8')) as { steps: Step[] }).steps;
  const results = steps.flatMap((s) => s.observation?.results ?? []);
  return steps.flatMap((s) => s.tool_calls ?? []).map((c) => ({
    name: c.function_name,
    result: JSON.stringify(results.filter((r) => r.source_call_id === c.tool_call_id).map((r) => r.content ?? null)),
  }));
}

// The config each writes is pinned in installed-pure.test.ts; here the agent reads it and calls the server.
describe.each([
  // The server's tool as each agent names it: opencode vault_lookup, gemini-cli mcp_vault_lookup, cline vault__lookup
  // (offered in the request); qwen-code mcp__vault__lookup, deferred behind its tool_search and called by name.
  { agent: 'opencode' as const, model: 'openai/gpt-4.1-mini', tool: 'vault_lookup', skills: '/logs/agent/home/.config/opencode/skills' },
  { agent: 'gemini-cli' as const, model: 'google/gemini-2.5-pro', tool: 'mcp_vault_lookup', skills: '/logs/agent/home/.gemini/skills' },
  { agent: 'qwen-code' as const, model: 'openai/qwen3-coder-plus', tool: 'mcp__vault__lookup', skills: '/logs/agent/home/.qwen/skills' },
  { agent: 'cline' as const, model: 'openai/gpt-4.1-mini', tool: 'vault__lookup', skills: null },
  // openhands offers the server's tool by its own name (its SDK's MCPToolDefinition), from ~/.openhands/mcp.json.
  { agent: 'openhands' as const, model: 'openai/gpt-4.1-mini', tool: 'lookup', skills: '/logs/agent/home/.openhands/skills' },
])('$agent calls the task\'s MCP server when its model asks (Task Folder Format § [environment] mcp_servers)', ({ agent, model, tool, skills }) => {
  it('the tools/call arrives at the server in the sandbox, and the tool\'s answer is in the ATIF trajectory', async () => {
    const { fake } = world;
    fake.command = WRITE_HELLO;
    fake.firstTool = tool;
    const before = fake.firstToolCalls.length;
    try {
      // Looked at once the model has called the tool (opencode's title call, without tools, comes before it).
      const { row, seen } = await runWatching(agent, model, 'mcp-stdio', `cat ${SERVER_LOG}; echo =====; ${skills ? `cat ${skills}/greeting/SKILL.md` : 'true'}`,
        () => fake.firstToolCalls.length > before);
      expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, failure_kind: null });
      const [log, skill] = seen.split('=====\n');
      const requests = log!.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { method: string; name: string | null });
      expect(requests.map((r) => r.method)).toContain('tools/list');
      expect(requests.filter((r) => r.method === 'tools/call')).toEqual([{ method: 'tools/call', name: 'lookup' }]);
      if (skills) expect(skill).toContain('Say hello.');

      const called = fake.firstToolCalls.slice(before);
      expect(called).toHaveLength(1);
      const inTrajectory = callsIn(row).filter((c) => c.name === called[0]);
      expect(inTrajectory, JSON.stringify(callsIn(row))).toHaveLength(1);
      expect(inTrajectory[0]!.result).toContain(ANSWER);
    } finally {
      fake.firstTool = undefined;
    }
  }, agent === 'openhands' ? OPENHANDS_INSTALL_TIMEOUT : INSTALL_TIMEOUT);
});
