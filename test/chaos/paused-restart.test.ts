import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { ownWorkerQueues, waitUntil } from '../helpers/worker-process.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a paused batch whose worker is killed with -9 (issue 17: survives a worker restart)', () => {
  const own = ownWorkerQueues('paused');
  afterAll(() => own.stop());

  it('is still paused after the restart, starts nothing until resumed, then finishes every episode', async () => {
    const client = await own.client();
    const first = own.startWorker();
    const handle = await startBatch({
      dataset: writeDataset(sleepyTasks(4, 3)), concurrency: 1, resultsDir: mkdtempSync(join(tmpdir(), 'berth-paused-')),
      taskQueue: own.env.BERTH_TASK_QUEUE, client,
    });
    await waitUntil(async () => (await handle.progress()).running === 1, 90_000, 'the first episode');
    expect(await handle.pause()).toMatchObject({ paused: true });
    first.kill9();
    await sleep(2000);
    own.startWorker();

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
