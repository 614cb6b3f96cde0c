import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { hostPollers } from '../../src/config/pollers.ts';
import { berth } from '../helpers/cli.ts';
import { slotsInUse, testHostQueue } from '../helpers/host-slots.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';

const ADDRESS = '127.0.0.1:7233';
const SLOTS = 4;

// docs/design.md section 7, Slots: sandbox slots belong to a host, not to a worker process. Before they did, a second
// worker on the host stopped every batch after a few episodes (a slot reserved by one process was never freed by
// the other that tore its episode down).
describe('several worker processes on one host share its slots', () => {
  const suffix = `shared-${randomBytes(3).toString('hex')}`;
  const env = { TEMPORAL_ADDRESS: ADDRESS, BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_WORKER_SLOTS: String(SLOTS) };
  const workers: WorkerProcess[] = [];
  let connection: Connection;
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await connection?.close();
  });

  // Each agent takes 2 s, so a batch lasts long enough for its status to be asked while episodes wait.
  const dataset = writeDataset(sleepyTasks(20, 2));
  const batches = async (client: Client, queue: string, count: number, watch?: (batchId: string, ended: () => boolean) => Promise<void>) => {
    for (let b = 0; b < count; b++) {
      const handle = await startBatch({ dataset, concurrency: 8, resultsDir: mkdtempSync(join(tmpdir(), 'berth-shared-')), taskQueue: env.BERTH_TASK_QUEUE, client });
      let ended = false;
      const watching = watch?.(handle.batchId, () => ended);
      const summary = await handle.wait();
      ended = true;
      await watching;
      expect(summary.rows).toHaveLength(20);
      expect(summary.rows.filter((r) => r.reward === 1)).toHaveLength(20);
    }
    await waitUntil(() => slotsInUse(queue) === 0, 30_000, 'the host\'s slots in use back to 0');
  };

  it('two, then three workers: 3 batches of 20 at concurrency 8 each, all finish, slots in use back to 0; status shows the waiting', async () => {
    connection = await Connection.connect({ address: ADDRESS });
    const client = new Client({ connection });
    const queue = await testHostQueue(suffix);
    const polling = (n: number) => waitUntil(async () => (await hostPollers(ADDRESS, 'default', queue)).length >= n, 90_000, `${n} workers polling ${queue}`);
    workers.push(startWorkerProcess(env));
    await polling(1);
    workers.push(startWorkerProcess(env));
    await polling(2);
    expect(workers[1]!.output()).toMatch(new RegExp(`1 other worker\\(s\\) already poll this host's queue ${queue} \\(\\d+@`));

    // Concurrency 8 over 4 slots: some episodes wait, and the batch's status says where and why. Asked while each
    // batch runs until it has said so once: a batch can end between two `berth status` of a loaded machine (CI,
    // 2026-12-06: 20 episodes done before the first batch's status showed a wait).
    const waiting = new RegExp(`waiting for a sandbox slot on \\S+: ${SLOTS}/${SLOTS} in use`);
    let saw = '';
    let last = '';
    await batches(client, queue, 3, async (batchId, ended) => {
      while (!waiting.test(saw) && !ended()) {
        const r = await berth(['status', batchId], env);
        if (waiting.test(r.stdout)) saw = r.stdout;
        else last = r.stdout;
      }
    });
    expect(saw, `berth status never showed episodes waiting for a slot; last status:\n${last}`).toMatch(waiting);

    const status = JSON.parse((await berth(['server', 'status', '--json'], env)).stdout) as { host: { queue: string; workers: unknown[]; slots: { in_use: number; capacity: number } } };
    expect(status.host).toMatchObject({ queue, slots: { in_use: 0, capacity: SLOTS } });
    expect(status.host.workers).toHaveLength(2);

    workers.push(startWorkerProcess(env));
    await polling(3);
    await batches(client, queue, 3);
  }, 900_000);
});
