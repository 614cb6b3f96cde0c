// An http MCP server on main's own localhost reaches the openai agent (issue 22, "MCP servers and skills reach the
// installed agents": a server URL on `localhost` or `main` is reached from inside the sandbox, not dialled on the
// worker host; Task Folder Format § [environment] mcp_servers). The task's image starts two servers that listen
// ONLY on main's loopback, a streamable-http one on localhost and an sse one on 127.0.0.1 whose endpoint event names
// localhost; the scripted openai model calls each one's tool and writes its answer, and the row scores.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { startScriptedServer } from '../agents/scripted-openai.ts';
import { BASE_IMAGE } from './helpers.ts';
import { solveWithTool, sseServer, streamableHttpServer } from './mcp-servers.ts';

const HTTP_SECRET = 'berth-localhost-http-secret-2';
const SSE_SECRET = 'berth-localhost-sse-secret-9';
// Ports nothing on the worker host listens on: a worker that dialled them itself would be refused.
const HTTP_PORT = 18731;
const SSE_PORT = 18732;

const health = (port: number) => `python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:${port}/health')"`;

const dataset = (want: string) => writeDataset({
  'local/task.toml': [
    '[environment]', 'workdir = "/app"',
    '[environment.healthcheck]', `command = "${health(HTTP_PORT).replace(/"/g, '\\"')} && ${health(SSE_PORT).replace(/"/g, '\\"')}"`, 'interval_sec = 1', 'retries = 30',
    '[[environment.mcp_servers]]', 'name = "local"', 'transport = "streamable-http"', `url = "http://localhost:${HTTP_PORT}/mcp"`,
    '[[environment.mcp_servers]]', 'name = "loopback"', 'transport = "sse"', `url = "http://127.0.0.1:${SSE_PORT}/sse"`,
    '[agent]', 'timeout_sec = 120', '[verifier]', 'timeout_sec = 60', '',
  ].join('\n'),
  'local/instruction.md': 'Get the secret from the MCP server and write it to /app/answer.txt.\n',
  // The image's entrypoint runs beside the keep-alive (docs/design.md section 7, Images): both servers live in main only.
  'local/environment/Dockerfile': [
    `FROM ${BASE_IMAGE}`, 'COPY mcp_http.py mcp_sse.py /srv/', 'WORKDIR /app',
    'ENTRYPOINT ["/bin/sh", "-c", "python3 /srv/mcp_http.py & exec python3 /srv/mcp_sse.py"]', '',
  ].join('\n'),
  'local/environment/mcp_http.py': streamableHttpServer(HTTP_SECRET, { bind: '127.0.0.1', port: HTTP_PORT }),
  'local/environment/mcp_sse.py': sseServer(SSE_SECRET, { bind: '127.0.0.1', port: SSE_PORT, advertised: `localhost:${SSE_PORT}` }),
  'local/tests/test.sh': `#!/bin/bash
if [ "$(cat /app/answer.txt 2>/dev/null)" = "${want}" ]; then echo 1; else echo "answer: $(cat /app/answer.txt 2>&1)"; echo 0; fi | tee /dev/stderr | tail -1 > /logs/verifier/reward.txt
`,
});

describe('MCP servers on main\'s localhost', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('mcp-main-localhost'); });
  afterAll(async () => { await cluster?.stop(); });

  const run = async (tool: string, want: string) => {
    const server = await startScriptedServer(solveWithTool(tool, {}));
    try {
      const handle = await startBatch({
        dataset: dataset(want), agent: 'openai', resultsDir: mkdtempSync(join(tmpdir(), 'berth-mcp-local-')),
        agentArgs: { base_url: server.baseUrl, model: 'scripted-model' }, taskQueue: cluster.taskQueue, client: cluster.client,
      });
      const row = (await handle.wait()).rows[0]!;
      const log = readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'test-stdout.txt'), 'utf8');
      expect(row, `${row.failure_reason ?? ''}\n${log}\n${JSON.stringify(server.requests[0]?.body.messages.at(-1))}`).toMatchObject({ reward: 1, mask_sample: false, response_text: 'wrote the secret' });
      expect(server.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_mcp', content: want });
      const offered = ((server.requests[0]!.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
      expect(offered.sort()).toEqual(['bash', 'local__get_secret', 'loopback__get_secret']);
      const transcript = readFileSync(join(row.logs_dir!, 'turn-1', 'agent', 'trajectory.json'), 'utf8');
      expect(transcript).toContain(want);
    } finally {
      await server.close();
    }
  };

  it('a streamable-http server on localhost: each POST made from inside main', async () => {
    await run('local__get_secret', HTTP_SECRET);
  });

  it('an sse server on 127.0.0.1: its event stream and its POSTs made from inside main, paired as there', async () => {
    await run('loopback__get_secret', SSE_SECRET);
  });
});
