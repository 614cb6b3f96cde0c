import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a paused batch whose worker is killed with -9 (issue 17: survives a worker restart)', () => {
  const suffix = `paused-${randomBytes(3).toString('hex')}`;
  const env = { BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_HEARTBEAT_TIMEOUT_SEC: '6' };
  const workers: WorkerProcess[] = [];
  let connection: Connection;
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await connection?.close();
  });

  it('is still paused after the restart, starts nothing until resumed, then finishes every episode', async () => {
    connection = await Connection.connect({ address: '127.0.0.1:7233' });
    const client = new Client({ connection });
    workers.push(startWorkerProcess(env));
    const files: Record<string, string> = {};
    for (const id of ['p', 'q', 'r', 's']) {
      files[`${id}/task.toml`] = BASE_TOML;
      files[`${id}/instruction.md`] = 'wait\n';
      files[`${id}/solution/solve.sh`] = '#!/bin/bash\nsleep 3\necho ok > out.txt\n';
      files[`${id}/tests/test.sh`] = '#!/bin/bash\ngrep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n';
    }
    const handle = await startBatch({
      dataset: writeDataset(files), concurrency: 1, resultsDir: mkdtempSync(join(tmpdir(), 'berth-paused-')), taskQueue: env.BERTH_TASK_QUEUE, client,
    });
    await waitUntil(async () => (await handle.progress()).running === 1, 90_000, 'the first episode');
    expect(await handle.pause()).toMatchObject({ paused: true });
    workers[0]!.kill9();
    await sleep(2000);
    workers.push(startWorkerProcess(env));

    // The first episode re-attaches and finishes; the new worker rebuilt the batch from history, pause included.
    await waitUntil(async () => (await handle.progress().catch(() => undefined))?.done === 1, 120_000, 'the running episode to finish after the restart');
    await sleep(4000);
    expect(await handle.progress()).toMatchObject({ paused: true, done: 1, running: 0, total: 4 });
    expect((await listEpisodes(client, handle.batchId)).length).toBe(1);

    expect(await handle.resume()).toMatchObject({ paused: false });
    const summary = await handle.wait();
    expect(summary.metrics).toMatchObject({ scored: 4, masked: 0, failed: 0, mean_reward: 1 });
  }, 300_000);
});
