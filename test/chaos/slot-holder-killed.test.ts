import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostPollers } from '../../src/config/pollers.ts';
import { readSlots, slotsFile } from '../../src/config/slots.ts';
import { startBatch } from '../../src/client/batch.ts';
import { testHostQueue } from '../helpers/host-slots.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';

const ADDRESS = '127.0.0.1:7233';

// docs/design.md section 7, Slots: a slot whose episode is closed is freed; the slots of a worker process killed with -9
// come back once its episodes have been resumed by the host's other worker (or have closed).
describe('a worker killed with -9 while holding slots', () => {
  const suffix = `holder-${randomBytes(3).toString('hex')}`;
  const env = {
    TEMPORAL_ADDRESS: ADDRESS, BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_WORKER_SLOTS: '4',
    BERTH_HEARTBEAT_TIMEOUT_SEC: '6', BERTH_SCHEDULE_TO_START_SEC: '30',
  };
  const workers: WorkerProcess[] = [];
  let connection: Connection;
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await connection?.close();
  });

  it('its slots come back once its episodes are resumed elsewhere on the host, and every episode finishes', async () => {
    connection = await Connection.connect({ address: ADDRESS });
    const client = new Client({ connection });
    const queue = await testHostQueue(suffix);
    const [doomed, survivor] = [startWorkerProcess(env), startWorkerProcess(env)];
    workers.push(doomed, survivor);
    // Both polling before the batch starts: on a loaded machine one worker may take its time to start, and the other
    // would then run the whole batch alone (CI saw the doomed one hold no slot for 120 s).
    await waitUntil(async () => {
      const ids = (await hostPollers(ADDRESS, 'default', queue)).map((p) => p.identity);
      return [doomed, survivor].every((w) => ids.some((id) => id.startsWith(`${w.child.pid}@`)));
    }, 120_000, 'both workers polling the host queue').catch((err: Error) => {
      throw new Error(`${err.message}\n${[doomed, survivor].map((w) => `worker ${w.child.pid}:\n${w.output().slice(-2000)}`).join('\n')}`);
    });
    const files = sleepyTasks(8, 10);
    const handle = await startBatch({ dataset: writeDataset(files), concurrency: 8, resultsDir: mkdtempSync(join(tmpdir(), 'berth-holder-')), taskQueue: env.BERTH_TASK_QUEUE, client });

    const held = () => readSlots(slotsFile(queue)).leases;
    const mine = `${hostname()}:${doomed.child.pid}`;
    await waitUntil(() => held().length === 4 && held().some((l) => l.by === mine && l.seeded !== undefined), 120_000, 'the doomed worker holding seeded slots');
    doomed.kill9();

    const summary = await handle.wait();
    expect(summary.rows).toHaveLength(8);
    expect(summary.rows.map((r) => r.reward)).toEqual(Array(8).fill(1));
    // Freed by the survivor: by the episodes' own teardowns, or by its reconciler for removals the dead one left.
    await waitUntil(() => held().length === 0, 120_000, `the slots back to 0 (still: ${JSON.stringify(held())})`);
  }, 600_000);
});
