import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { findTemporalCli } from '../../src/server/binary.ts';
import { ensureServer, stopServer } from '../../src/server/devserver.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';

// Stops a server, so it runs its own on its own port and home (docs/design.md section 7, Tests).
describe('the Temporal dev server stopped and started mid-batch', () => {
  let worker: WorkerProcess | undefined;
  let connection: Connection | undefined;
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await stopServer();
  });

  it('every row arrives', async () => {
    process.env.TEMPORAL_CLI = findTemporalCli().path;
    process.env.BERTH_HOME = mkdtempSync(join(tmpdir(), 'berth-restart-'));
    process.env.BERTH_TEMPORAL_PORT = '7633';
    process.env.BERTH_UI_PORT = '8633';
    const address = '127.0.0.1:7633';
    await ensureServer();
    worker = startWorkerProcess({ TEMPORAL_ADDRESS: address, BERTH_TASK_QUEUE: 'restart-test', BERTH_HOST_QUEUE_SUFFIX: 'restart-test' });
    connection = await Connection.connect({ address });
    const client = new Client({ connection });
    const files: Record<string, string> = {};
    for (const id of ['a', 'b', 'c', 'd']) {
      files[`${id}/task.toml`] = BASE_TOML;
      files[`${id}/instruction.md`] = 'wait a little\n';
      files[`${id}/solution/solve.sh`] = '#!/bin/bash\nsleep 6\necho done > out.txt\n';
      files[`${id}/tests/test.sh`] = '#!/bin/bash\n[ -f /app/out.txt ] && echo 1 > /logs/verifier/reward.txt\n';
    }
    const handle = await startBatch({ dataset: writeDataset(files), concurrency: 2, resultsDir: mkdtempSync(join(tmpdir(), 'berth-restart-results-')), taskQueue: 'restart-test', client });
    await waitUntil(async () => (await handle.progress().catch(() => ({ running: 0 }))).running >= 2, 60_000, 'two running episodes');
    await stopServer();
    await new Promise((r) => setTimeout(r, 3000));
    await ensureServer();
    const summary = await handle.wait();
    expect(summary.rows.map((r) => [r.task_id, r.reward])).toEqual([['a', 1], ['b', 1], ['c', 1], ['d', 1]]);
    expect(summary.metrics).toMatchObject({ scored: 4, masked: 0, failed: 0 });
  }, 300_000);
});
