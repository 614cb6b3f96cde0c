import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';

describe('a sandbox removed from outside mid-turn (docs/design.md section 3, Sandbox loss)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('loss'); });
  afterAll(async () => { await cluster?.stop(); });

  it('masks the row as provider_unavailable within 30 s and leaves no container', async () => {
    const dataset = writeDataset({
      'slow/task.toml': BASE_TOML.replace('timeout_sec = 60\n[verifier]', 'timeout_sec = 300\n[verifier]'),
      'slow/instruction.md': 'Take your time.\n',
      'slow/solution/solve.sh': '#!/bin/bash\ntouch /app/started\nsleep 240\n',
      'slow/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-loss-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const docker = new Docker();
    const workflowId = `berth/${handle.batchId}/slow/1`;
    const containerId = await waitForFileInEpisode(workflowId, '/app/started', 60_000, 'the agent process');
    const removedAt = Date.now();
    await docker.getContainer(containerId).remove({ force: true });
    const summary = await handle.wait();
    const elapsed = (Date.now() - removedAt) / 1000;
    expect(summary.rows[0]).toMatchObject({ mask_sample: true, reward: null, failure_kind: 'provider_unavailable' });
    // The agent failed inside seedThenAgentTurn: its failure named the seeded sandbox, so the row keeps its logs folder.
    expect(summary.rows[0]!.logs_dir).not.toBeNull();
    expect(elapsed).toBeLessThan(30);
    await noContainersLeft(`berth.workflow=${workflowId}`);
  });
});
