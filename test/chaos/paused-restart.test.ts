import { afterAll, describe, expect, it } from 'vitest';
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { LABEL_POOL_OWNER, POOL_NAME_PREFIX } from '../../src/sandbox/names.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { ownWorkerQueues, waitUntil } from '../helpers/worker-process.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The sandboxes the warm pool of worker process `pid` seeded ahead (its owner label names the process) that no episode
 * claimed: a claimed one is renamed to its episode's name and lives on as that episode's sandbox.
 */
async function seededAheadBy(pid: number): Promise<string[]> {
  const list = await new Docker().listContainers({ all: true, filters: { label: [LABEL_POOL_OWNER] } });
  return list.filter((c) => c.Labels[LABEL_POOL_OWNER]?.startsWith(`${hostname()}:${pid}:`))
    .map((c) => (c.Names[0] ?? '').replace(/^\//, '')).filter((name) => name.startsWith(POOL_NAME_PREFIX));
}

describe('a paused batch whose worker is killed with -9 (issue 17: survives a worker restart)', () => {
  const own = ownWorkerQueues('paused');
  afterAll(() => own.stop());

  it('is still paused after the restart, starts nothing until resumed, then finishes every episode; the restarted worker removes what the killed one seeded ahead', async () => {
    const client = await own.client();
    const first = own.startWorker();
    const handle = await startBatch({
      dataset: writeDataset(sleepyTasks(4, 3)), concurrency: 1, resultsDir: mkdtempSync(join(tmpdir(), 'berth-paused-')),
      taskQueue: own.env.BERTH_TASK_QUEUE, client,
    });
    await waitUntil(async () => (await handle.progress()).running === 1, 90_000, 'the first episode');
    // Its warm pool seeds ahead for the next episodes; killed with them, so nothing of it removes them.
    await waitUntil(async () => (await seededAheadBy(first.child.pid!)).length > 0, 30_000, 'the first worker to seed ahead');
    expect(await handle.pause()).toMatchObject({ paused: true });
    first.kill9();
    await sleep(2000);
    own.startWorker();
    // Issue 25 (the warm pool): what a dead worker's pool left is removed; the next worker on the host does it as it
    // starts, not at its first periodic look 30 s later (which a short batch never reaches).
    await waitUntil(async () => (await seededAheadBy(first.child.pid!)).length === 0, 15_000, "the killed worker's pooled sandboxes to be removed");

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
