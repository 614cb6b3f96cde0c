// A task's sse and stdio MCP servers reach the openai agent (issue 13; Task Folder Format § [environment]
// mcp_servers; Harbor's `{name, transport sse(default)|streamable-http|stdio, url, command, args}`): an sse
// server sidecar given only a `url` (sse is the default transport) and a stdio server started in main as the
// agent user, each of whose tools the scripted openai agent calls to solve its task. A server that cannot start
// is a note in the turn's logs, never a masked row.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { startScriptedServer } from '../agents/scripted-openai.ts';
import { BASE_IMAGE, groupLeftovers } from './helpers.ts';
import { solveWithTool, sseServer } from './mcp-servers.ts';

const SECRET = 'berth-sse-secret-3';
const STDIO_SECRET = 'berth-stdio-secret-5';


// MCP's stdio transport: lines of JSON on stdin and stdout. Its tool reads a file only main has and says who it
// runs as, so the answer proves where and as whom the server ran.
const STDIO_SERVER = `
import json, os, pwd, sys
initialized = False
print("secret-mcp starting", file=sys.stderr, flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        initialized = initialized or msg.get("method") == "notifications/initialized"
        continue
    m = msg["method"]
    if m == "initialize":
        out = {"result": {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "vault", "version": "1"}}}
    elif not initialized:
        out = {"error": {"code": -32002, "message": "not initialized"}}
    elif m == "tools/list":
        out = {"result": {"tools": [{"name": "read_secret", "description": "Reads the vault.", "inputSchema": {"type": "object", "properties": {"suffix": {"type": "string"}}}}]}}
    elif m == "tools/call" and msg["params"]["name"] == "read_secret":
        text = open("/opt/vault/secret").read().strip() + "@" + pwd.getpwuid(os.getuid()).pw_name + msg["params"]["arguments"].get("suffix", "")
        out = {"result": {"content": [{"type": "text", "text": text}]}}
    else:
        out = {"error": {"code": -32601, "message": "no such method"}}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **out}), flush=True)
`;

const answerCheck = (want: string) => `#!/bin/bash
ok=1
[ "$(cat /app/answer.txt 2>/dev/null)" = "${want}" ] || { echo "answer: $(cat /app/answer.txt 2>&1)"; ok=0; }
if pgrep -x python3 >/dev/null; then echo "a stdio server outlived its call: $(ps -ef)"; ok=0; fi
echo $ok > /logs/verifier/reward.txt
`;

const sseDataset = () => writeDataset({
  // No transport: sse is the default, as in Harbor.
  'sse/task.toml': `[environment]\nworkdir = "/app"\n[[environment.mcp_servers]]\nname = "secrets"\nurl = "http://mcp:8000/sse"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n`,
  'sse/instruction.md': 'Get the secret from the secrets MCP server and write it to /app/answer.txt.\n',
  'sse/environment/Dockerfile': `FROM ${BASE_IMAGE}\nWORKDIR /app\n`,
  'sse/environment/docker-compose.yaml': `services:\n  main:\n    depends_on:\n      mcp:\n        condition: service_healthy\n  mcp:\n    build: ./mcp\n    healthcheck:\n      test: ["CMD", "python3", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:8000/health')"]\n      interval: 1s\n      retries: 30\n`,
  'sse/environment/mcp/Dockerfile': `FROM ${BASE_IMAGE}\nCOPY server.py /srv/server.py\nCMD ["python3", "/srv/server.py"]\n`,
  'sse/environment/mcp/server.py': sseServer(SECRET),
  'sse/tests/test.sh': answerCheck(SECRET),
});

const stdioDataset = () => writeDataset({
  'stdio/task.toml': [
    '[environment]', 'workdir = "/app"',
    '[[environment.mcp_servers]]', 'name = "vault"', 'transport = "stdio"', 'command = "python3"', 'args = ["/usr/local/bin/secret-mcp.py"]',
    '[[environment.mcp_servers]]', 'name = "broken"', 'transport = "stdio"', 'command = "no-such-mcp-server"',
    '[agent]', 'timeout_sec = 120', 'user = "agent"', '[verifier]', 'timeout_sec = 60', '',
  ].join('\n'),
  'stdio/instruction.md': 'Read the secret from the vault MCP server and write it to /app/answer.txt.\n',
  'stdio/environment/Dockerfile': [
    `FROM ${BASE_IMAGE}`, 'RUN useradd -m agent && mkdir -p /opt/vault /app && chown agent /app',
    `RUN echo ${STDIO_SECRET} > /opt/vault/secret && chmod 644 /opt/vault/secret`, 'COPY secret-mcp.py /usr/local/bin/secret-mcp.py', 'WORKDIR /app', '',
  ].join('\n'),
  'stdio/environment/secret-mcp.py': STDIO_SERVER,
  'stdio/tests/test.sh': answerCheck(`${STDIO_SECRET}@agent!`),
});


describe('MCP servers over sse and stdio', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('compose-mcp-transports'); });
  afterAll(async () => { await cluster?.stop(); });

  const run = async (dataset: string, tool: string, args: Record<string, unknown>) => {
    const server = await startScriptedServer(solveWithTool(tool, args));
    try {
      const handle = await startBatch({
        dataset, agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-mcp-')),
        agentArgs: { base_url: server.baseUrl, model: 'scripted-model' }, taskQueue: cluster.taskQueue, client: cluster.client,
      });
      const row = (await handle.wait()).rows[0]!;
      const log = readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'test-stdout.txt'), 'utf8');
      expect(row, `${row.failure_reason ?? ''}\n${log}`).toMatchObject({ reward: 1, mask_sample: false, response_text: 'wrote the secret' });
      return { row, requests: server.requests };
    } finally {
      await server.close();
    }
  };

  it('an sse server sidecar given only a url: the agent calls its tool and solves the task', async () => {
    const { row, requests } = await run(sseDataset(), 'secrets__get_secret', {});
    expect(requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_mcp', content: SECRET });
    await groupLeftovers(`berth.workflow=${row.workflow_id}`);
  });

  it('a stdio server runs in main as the agent user, once per call; one whose command is missing is a note', async () => {
    const { row, requests } = await run(stdioDataset(), 'vault__read_secret', { suffix: '!' });
    expect(requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_mcp', content: `${STDIO_SECRET}@agent!` });
    const offered = ((requests[0]!.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    expect(offered.sort()).toEqual(['bash', 'vault__read_secret']);
    const notes = readFileSync(join(row.logs_dir!, 'turn-1', 'agent', 'mcp.txt'), 'utf8');
    expect(notes).toMatch(/MCP server broken \(stdio\) at no-such-mcp-server did not list its tools: .*exited with code 127.*no-such-mcp-server/);
    expect(notes).not.toMatch(/vault/);
  });
});
