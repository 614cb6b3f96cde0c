// A task's MCP server and skills reach the agent (issue 13; Task Folder Format § [environment] mcp_servers,
// skills_dir): an MCP server sidecar speaking streamable-http (a small server in the test), whose tool the
// scripted openai agent calls to solve the task; the command agent finds the task file through BERTH_TASK_FILE.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { bashCall, finalMessage, startScriptedServer, type Reply } from '../agents/scripted-openai.ts';
import { BASE_IMAGE, groupLeftovers } from './helpers.ts';
import { streamableHttpServer } from './mcp-servers.ts';

const SECRET = 'berth-mcp-secret-7';


// What the command agent runs: the task file names the server; ask it like any MCP client would.
const ASK = `
import json, os, urllib.request
task = json.load(open(os.environ["BERTH_TASK_FILE"]))
url = task["mcp_servers"][0]["url"]
session = None
def post(msg):
    global session
    req = urllib.request.Request(url, data=json.dumps(msg).encode(), headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **({"Mcp-Session-Id": session} if session else {})})
    res = urllib.request.urlopen(req)
    session = res.headers.get("Mcp-Session-Id") or session
    return res.read().decode()
post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "ask", "version": "1"}}})
text = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_secret", "arguments": {}}})
data = json.loads([l[5:] for l in text.splitlines() if l.startswith("data:")][0])
open("/app/answer.txt", "w").write(data["result"]["content"][0]["text"])
`;

const dataset = () => writeDataset({
  'secret/task.toml': `[environment]\nworkdir = "/app"\nskills_dir = "skills"\n[[environment.mcp_servers]]\nname = "secrets"\ntransport = "streamable-http"\nurl = "http://mcp:8000/mcp"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n`,
  'secret/instruction.md': 'Get the secret from the secrets MCP server and write it to /app/answer.txt.\n',
  'secret/environment/Dockerfile': `FROM ${BASE_IMAGE}\nCOPY ask.py /usr/local/bin/ask-mcp.py\nWORKDIR /app\n`,
  'secret/environment/ask.py': ASK,
  'secret/environment/skills/reading.md': '# How to read a secret\n',
  'secret/environment/docker-compose.yaml': `services:\n  main:\n    depends_on:\n      mcp:\n        condition: service_healthy\n  mcp:\n    build: ./mcp\n    healthcheck:\n      test: ["CMD", "python3", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:8000/health')"]\n      interval: 1s\n      retries: 30\n`,
  'secret/environment/mcp/Dockerfile': `FROM ${BASE_IMAGE}\nCOPY server.py /srv/server.py\nCMD ["python3", "/srv/server.py"]\n`,
  'secret/environment/mcp/server.py': streamableHttpServer(SECRET),
  // The task file as the spec writes it (folder 755, file 644), and the skills uploaded into skills_dir.
  'secret/tests/test.sh': `#!/bin/bash
ok=1
[ "$(cat /app/answer.txt 2>/dev/null)" = "${SECRET}" ] || { echo "answer: $(cat /app/answer.txt 2>&1)"; ok=0; }
[ "$(stat -c %a /tmp/.berth)" = 755 ] && [ "$(stat -c %a /tmp/.berth/task.json)" = 644 ] || { echo "modes wrong"; ok=0; }
python3 -c "import json; t = json.load(open('/tmp/.berth/task.json')); assert t['mcp_servers'][0]['url'] == 'http://mcp:8000/mcp' and t['skills_dir'] == '/app/skills'" || ok=0
[ -f /app/skills/reading.md ] || { echo "skills missing"; ok=0; }
echo $ok > /logs/verifier/reward.txt
`,
});

describe('MCP servers and skills', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('compose-mcp'); });
  afterAll(async () => { await cluster?.stop(); });

  it('the openai agent is offered the server\'s tool beside bash, calls it, and solves the task', async () => {
    const script = (n: number, req: { body: { messages: Array<Record<string, unknown>>; tools?: unknown[] } }): Reply => {
      if (n === 0) {
        const names = (req.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
        if (!names.includes('secrets__get_secret') || !names.includes('bash')) return finalMessage(`tools offered: ${names.join(',')}`);
        return { body: { id: 'c0', object: 'chat.completion', created: 1, model: 'scripted-model', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_mcp', type: 'function', function: { name: 'secrets__get_secret', arguments: '{}' } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } };
      }
      if (n === 1) {
        const result = String(req.body.messages[req.body.messages.length - 1]!.content);
        return bashCall('call_write', `printf %s '${result.replace(/'/g, '')}' > /app/answer.txt`);
      }
      return finalMessage('wrote the secret');
    };
    const server = await startScriptedServer(script);
    try {
      const handle = await startBatch({
        dataset: dataset(), agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-mcp-')),
        agentArgs: { base_url: server.baseUrl, model: 'scripted-model' }, taskQueue: cluster.taskQueue, client: cluster.client,
      });
      const row = (await handle.wait()).rows[0]!;
      const log = readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'test-stdout.txt'), 'utf8');
      expect(row, `${row.failure_reason ?? ''}\n${log}`).toMatchObject({ reward: 1, mask_sample: false, response_text: 'wrote the secret' });
      expect(server.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_mcp', content: SECRET });
      await groupLeftovers(`berth.workflow=${row.workflow_id}`);
    } finally {
      await server.close();
    }
  });

  it('the command agent finds the task file in BERTH_TASK_FILE and reaches the server by its service name', async () => {
    const handle = await startBatch({
      dataset: dataset(), agent: 'command', agentArgs: { cmd: 'python3 /usr/local/bin/ask-mcp.py' },
      resultsDir: mkdtempSync(join(tmpdir(), 'berth-mcp-')), taskQueue: cluster.taskQueue, client: cluster.client,
    });
    const row = (await handle.wait()).rows[0]!;
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false });
  });
});
