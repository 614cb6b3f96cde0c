// A sidecar built from a context outside environment/ (`context: ..`, as Harbor allows; issue 13, Compose rules):
// the build sees the task folder, so a file beside environment/ reaches the sidecar's image and main reads it there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { groupLeftovers } from './helpers.ts';

const COMPOSE = `services:
  main:
    depends_on:
      side:
        condition: service_healthy
  side:
    build:
      context: ..
      dockerfile: environment/side.Dockerfile
    healthcheck:
      test: ["CMD", "python3", "-c", "import urllib.request; urllib.request.urlopen('http://localhost:8080/greeting.txt', timeout=2)"]
      interval: 1s
      retries: 30
`;

describe('a sidecar whose build context is the task folder (context: ..)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('compose-context'); });
  afterAll(async () => { await cluster?.stop(); });

  it('builds from outside environment/ and main reads what the build copied', async () => {
    const dataset = writeDataset({
      'ctx/task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
      'ctx/instruction.md': 'Fetch the greeting.\n',
      'ctx/shared/greeting.txt': 'hello from beside environment/\n',
      'ctx/environment/docker-compose.yaml': COMPOSE,
      'ctx/environment/side.Dockerfile': 'FROM berth-base:bookworm\nCOPY shared/greeting.txt /srv/greeting.txt\nCMD ["python3", "-m", "http.server", "8080", "-d", "/srv"]\n',
      'ctx/solution/solve.sh': '#!/bin/bash\npython3 -c "import urllib.request; print(urllib.request.urlopen(\'http://side:8080/greeting.txt\').read().decode(), end=\'\')" > /app/got.txt\n',
      'ctx/tests/test.sh': '#!/bin/bash\n[ "$(cat /app/got.txt)" = "hello from beside environment/" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-ctx-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const row = (await handle.wait()).rows[0]!;
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    await groupLeftovers(`berth.workflow=${row.workflow_id}`, []);
  });
});
