import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { waitUntil } from '../helpers/worker-process.ts';

describe('cancelling a batch (berth cancel)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('cancel'); });
  afterAll(async () => { await cluster?.stop(); });

  it('cancels the running episodes, removes their sandboxes, and counts them as failed', async () => {
    const files: Record<string, string> = {};
    for (const id of ['x', 'y']) {
      files[`${id}/task.toml`] = BASE_TOML.replace('timeout_sec = 60\n[verifier]', 'timeout_sec = 300\n[verifier]');
      files[`${id}/instruction.md`] = 'wait\n';
      files[`${id}/solution/solve.sh`] = '#!/bin/bash\nsleep 200\n';
      files[`${id}/tests/test.sh`] = '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n';
    }
    const handle = await startBatch({ dataset: writeDataset(files), resultsDir: mkdtempSync(join(tmpdir(), 'berth-cancel-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const docker = new Docker();
    const containers = () => docker.listContainers({ all: true, filters: { label: [`berth.batch=${handle.batchId}`] } });
    // Both episodes under way with their sandboxes (the host that prepared the tasks may have seeded them ahead).
    await waitUntil(async () => (await handle.progress()).running === 2 && (await containers()).length >= 2, 60_000, 'two sandboxes');
    const cancelled = await handle.cancel();
    expect(cancelled.sort()).toEqual([`berth/${handle.batchId}/x/1`, `berth/${handle.batchId}/y/1`]);
    const summary = await handle.collect();
    expect(summary.metrics).toMatchObject({ scored: 0, masked: 0, failed: 2 });
    await noContainersLeft(`berth.batch=${handle.batchId}`, 30_000);
    const statuses = (await listEpisodes(cluster.client, handle.batchId)).map((e) => e.status);
    expect(statuses).toEqual(['CANCELLED', 'CANCELLED']);
  });

  it('rows() returns once a cancelled batch closes: an episode it never started is neither a row nor a failure', async () => {
    const files: Record<string, string> = {};
    for (const id of ['a', 'b', 'c']) {
      files[`${id}/task.toml`] = BASE_TOML.replace('timeout_sec = 60\n[verifier]', 'timeout_sec = 300\n[verifier]');
      files[`${id}/instruction.md`] = 'wait\n';
      files[`${id}/solution/solve.sh`] = '#!/bin/bash\nsleep 200\n';
      files[`${id}/tests/test.sh`] = '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n';
    }
    const handle = await startBatch({ dataset: writeDataset(files), concurrency: 1, resultsDir: mkdtempSync(join(tmpdir(), 'berth-cancel-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const docker = new Docker();
    // The first episode under way and a sandbox of the batch up (a warm pool may hold one more for the next episode).
    const started = async () => (await handle.progress()).running >= 1 && (await docker.listContainers({ filters: { label: [`berth.batch=${handle.batchId}`] } })).length >= 1;
    await waitUntil(started, 60_000, 'the first sandbox');
    const rows = handle.rows();
    await handle.cancel();
    const outcome = await Promise.race([rows, new Promise((r) => setTimeout(() => r('still waiting'), 20_000))]);
    expect(outcome).toEqual({ rows: [], failed: 1 });
    await noContainersLeft(`berth.batch=${handle.batchId}`, 30_000);
  });
});
