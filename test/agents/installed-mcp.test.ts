// The task's MCP servers and skills reach the installed agents in their own configuration (issue 22;
// task-folder-format.md § [environment] mcp_servers and skills_dir): claude-code gets `--mcp-config` with each server
// in its own transport names and the skills in ~/.claude/skills; codex gets `[mcp_servers.<name>]` in
// $CODEX_HOME/config.toml and the skills in $CODEX_HOME/skills; mini-swe-agent has no MCP client (none is written).
// What each agent receives is read inside the running sandbox while the agent runs; claude-code then calls the
// task's stdio MCP server (a real one, in the sandbox) and the tool's answer reaches its ATIF trajectory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { AgentName, ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { startFakeVendors, WRITE_HELLO, type FakeVendors } from './fake-vendors.ts';

const REAL_KEY = 'sk-berth-test-REAL-mcp-8b1c';
const ANSWER = 'berth-mcp-answer-42';
const INSTALL_TIMEOUT = 900_000;
const docker = new Docker();

// MCP's stdio transport: one JSON-RPC message per line. One tool, `lookup`, answering ANSWER.
const SERVER = `import json, sys
for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    m = msg.get("method")
    if m == "initialize":
        out = {"result": {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}}, "serverInfo": {"name": "vault", "version": "1"}}}
    elif m == "tools/list":
        out = {"result": {"tools": [{"name": "lookup", "description": "Looks the answer up.", "inputSchema": {"type": "object", "properties": {}}}]}}
    elif m == "tools/call":
        out = {"result": {"content": [{"type": "text", "text": "${ANSWER}"}]}}
    elif m == "ping":
        out = {"result": {}}
    else:
        out = {"error": {"code": -32601, "message": "no such method"}}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **out}), flush=True)
`;

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

let cluster: TestCluster;
let fake: FakeVendors;
const dataset = writeDataset({ ...task('mcp-stdio', [SERVERS.stdio]), ...task('mcp-all', [SERVERS.stdio, SERVERS.http, SERVERS.sse]) });

beforeAll(async () => {
  fake = await startFakeVendors(REAL_KEY);
  Object.assign(process.env, { ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: REAL_KEY, OPENAI_BASE_URL: `${fake.url}/v1` });
  cluster = await startTestWorkers('installed-mcp');
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await fake?.close();
});

/** Inside the batch's running sandbox, as root: `script`'s stdout. */
async function inSandbox(batchId: string, script: string): Promise<string> {
  const [c] = await docker.listContainers({ filters: { label: [`berth.batch=${batchId}`] } });
  if (!c) throw new Error(`no running sandbox of batch ${batchId}`);
  return execFileSync('docker', ['exec', c.Id, 'sh', '-c', script], { encoding: 'utf8' });
}

/** Runs `taskId` with `agent`, reading `script`'s output inside the sandbox while the agent runs (before its last answer). */
async function runWatching(agent: AgentName, model: string, taskId: string, script: string): Promise<{ row: ResultRow; seen: string }> {
  const batchId = `mcp-${agent}-${Date.now().toString(36)}`;
  let seen: Promise<string> = Promise.resolve('');
  let looked = false;
  fake.beforeFinish = async () => {
    if (looked) return;
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
    fake.command = WRITE_HELLO;
    fake.firstTool = 'mcp__vault__lookup';
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
      fake.firstTool = undefined;
    }
  }, INSTALL_TIMEOUT);

  it('codex: [mcp_servers.*] in $CODEX_HOME/config.toml (stdio and streamable HTTP; no client for sse) and skills in $CODEX_HOME/skills', async () => {
    fake.command = WRITE_HELLO;
    const { row, seen } = await runWatching('codex', 'openai/gpt-5-codex', 'mcp-all',
      'cat /logs/agent/home/.codex/config.toml; echo =====; cat /logs/agent/home/.codex/skills/greeting/SKILL.md');
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, failure_kind: null });
    const [config, skill] = seen.split('=====\n');
    expect(config).toBe('[mcp_servers."vault"]\ncommand = "python3"\nargs = ["/app/mcp_server.py"]\n\n[mcp_servers."remote"]\nurl = "http://localhost:8765/mcp"\n');
    expect(skill).toContain('Say hello.');
  }, INSTALL_TIMEOUT);
});
