// A multi-step Compose task keeps one group for every turn (Multi-Step Harbor Tasks § Compose sidecar sizing;
// issue 13), and a sidecar's file in /logs/verifier survives each clear when declared as a sidecar input
// (Task Folder Verifiers § Sidecar inputs).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, groupLeftovers } from './helpers.ts';

const COUNTER = `
from http.server import BaseHTTPRequestHandler, HTTPServer
hits = 0
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        global hits
        if self.path == "/hit":
            hits += 1
            with open("/logs/verifier/actions.jsonl", "a") as f:
                f.write('{"hit": %d}\\n' % hits)
        body = str(hits).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
HTTPServer(("0.0.0.0", 8000), H).serve_forever()
`;

const step = (n: number) => ({
  [`ms/steps/s${n}/instruction.md`]: `Hit the counter (step ${n}).\n`,
  [`ms/steps/s${n}/solution/solve.sh`]: `#!/bin/bash\npython3 -c "import urllib.request; urllib.request.urlopen('http://counter:8000/hit')"\necho $(hostname) >> /app/hosts\n`,
  // The same sidecar (its count) and the same main (its file) in every turn; the sidecar input kept.
  [`ms/steps/s${n}/tests/test.sh`]: `#!/bin/bash
count=$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://counter:8000/').read().decode())")
lines=$(wc -l < /logs/verifier/actions.jsonl)
hosts=$(sort -u /app/hosts | wc -l)
echo "count=$count lines=$lines hosts=$hosts"
[ "$count" = ${n} ] && [ "$lines" = ${n} ] && [ "$hosts" = 1 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
`,
});

describe('a multi-step Compose task', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('compose-steps'); });
  afterAll(async () => { await cluster?.stop(); });

  it("runs every turn in one group, and the sidecar's declared input survives each clear", async () => {
    const dataset = writeDataset({
      'dataset.toml': '[gym.tasks."ms".verifier]\ninputs = ["actions.jsonl"]\n',
      'ms/task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\nworkdir = "/app"\n[[steps]]\nname = "s1"\n[steps.agent]\ntimeout_sec = 60\n[steps.verifier]\ntimeout_sec = 60\n[[steps]]\nname = "s2"\n[steps.agent]\ntimeout_sec = 60\n[steps.verifier]\ntimeout_sec = 60\n`,
      'ms/environment/docker-compose.yaml': `services:\n  main:\n    volumes: ["verifier-logs:/logs/verifier"]\n  counter:\n    build: ./counter\n    volumes: ["verifier-logs:/logs/verifier"]\nvolumes:\n  verifier-logs: {}\n`,
      'ms/environment/counter/Dockerfile': `FROM ${BASE_IMAGE}\nCOPY server.py /srv/server.py\nCMD ["python3", "/srv/server.py"]\n`,
      'ms/environment/counter/server.py': COUNTER,
      ...step(1), ...step(2),
    });
    const handle = await startBatch({ dataset, agent: 'oracle', resultsDir: mkdtempSync(join(tmpdir(), 'berth-csteps-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const row = (await handle.wait()).rows[0]!;
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false });
    expect(row.turns.map((t) => t.reward)).toEqual([1, 1]);
    await groupLeftovers(`berth.workflow=${row.workflow_id}`);
  });
});
