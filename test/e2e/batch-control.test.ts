import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { batchWorkflowId, listEpisodes } from '../../src/client/episodes.ts';
import { BatchControlError } from '../../src/client/steer.ts';
import type { BatchProgress } from '../../src/workflows/types.ts';
import { berth } from '../helpers/cli.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { waitUntil } from '../helpers/worker-process.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('live control of a batch: pause, resume, resize (Temporal updates on BatchWorkflow)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('control'); });
  afterAll(async () => { await cluster?.stop(); });

  it('a paused batch of 30 starts nothing until resumed; its window follows resize 2 → 6 → 2; every episode scores', async () => {
    const handle = await startBatch({
      dataset: writeDataset(sleepyTasks(3, 3)), repeats: 10, concurrency: 2, resultsDir: mkdtempSync(join(tmpdir(), 'berth-control-')),
      taskQueue: cluster.taskQueue, client: cluster.client,
    });
    const started = (p: BatchProgress) => p.done + p.running;
    await waitUntil(async () => started(await handle.progress()) >= 2, 60_000, 'the first episodes');

    // Pause through the real CLI: it answers with the new state and prints the batch as paused.
    const paused = await berth(['pause', handle.batchId, '--json']);
    expect(paused.code, paused.stderr).toBe(0);
    const atPause = JSON.parse(paused.stdout).progress as BatchProgress;
    expect(atPause).toMatchObject({ paused: true, concurrency: 2, total: 30 });
    const startedAtPause = started(atPause);
    // Running episodes go on and finish; nothing new starts.
    await waitUntil(async () => (await handle.progress()).running === 0, 60_000, 'the running episodes to finish');
    await sleep(4000);
    const held = await handle.progress();
    expect(held).toMatchObject({ paused: true, done: startedAtPause, running: 0 });
    expect((await listEpisodes(cluster.client, handle.batchId)).length).toBe(startedAtPause);
    const status = await berth(['status', handle.batchId]);
    expect(status.stdout).toMatch(new RegExp(`PAUSED · ${startedAtPause}/30 done · 0 running \\(window 2\\)`));

    // The batch's validator refuses a bad window whoever sends it (here straight to the workflow, past the client's check).
    const raw = cluster.client.workflow.getHandle(batchWorkflowId(handle.batchId));
    await expect(raw.executeUpdate('resize', { args: [0] })).rejects.toThrow();
    await expect(raw.executeUpdate('resize', { args: [2.5] })).rejects.toThrow();
    await expect(handle.resize(0)).rejects.toThrow(BatchControlError);
    const bad = await berth(['resize', handle.batchId, '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('whole number');
    expect(await handle.progress()).toMatchObject({ paused: true, concurrency: 2, done: startedAtPause });

    expect(await handle.resume()).toMatchObject({ paused: false, concurrency: 2 });
    const grown = await berth(['resize', handle.batchId, '6']);
    expect(grown.code, grown.stderr).toBe(0);
    expect(grown.stdout).toMatch(/\d+\/30 done · \d+ running \(window 6\)/);
    await waitUntil(async () => (await handle.progress()).running === 6, 30_000, 'six running episodes');
    await waitUntil(async () => (await listEpisodes(cluster.client, handle.batchId)).filter((e) => e.status === 'RUNNING').length === 6,
      30_000, 'six episode workflows running');

    expect(await handle.resize(2)).toMatchObject({ concurrency: 2 });
    await waitUntil(async () => (await handle.progress()).running <= 2, 60_000, 'the window to shrink back to 2');
    // From now on never more than 2 at once: watched while four more episodes finish, then a wide window ends the batch.
    const doneAtShrink = (await handle.progress()).done;
    let most = 0;
    for (let p = await handle.progress(); p.done < Math.min(30, doneAtShrink + 4); p = await handle.progress()) {
      most = Math.max(most, p.running);
      await sleep(250);
    }
    expect(most).toBeLessThanOrEqual(2);
    await handle.resize(8);
    const rows = handle.wait();
    const summary = await rows;
    expect(summary.rows).toHaveLength(30);
    expect(summary.metrics).toMatchObject({ scored: 30, masked: 0, failed: 0, mean_reward: 1 });
  }, 300_000);
});
