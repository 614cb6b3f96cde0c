import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { temporalAddress } from '../../src/config/temporal.ts';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createHostServices, releaseHostServices } from '../../src/host/deps.ts';
import type { HostActivities } from '../../src/activities/host-activities.ts';
import type { SharedActivities } from '../../src/activities/shared-activities.ts';
import type { BatchJobFilesActivity } from '../../src/activities/types.ts';
import type { SandboxProvider } from '../../src/sandbox/index.ts';
import { createWorkers, installRuntime, workflowBundle } from '../../src/worker.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { batchJobFilesActivity } from '../../src/client/batch-job-files.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { writeDataset } from './tasks.ts';

export interface TestCluster {
  client: Client;
  connection: Connection;
  taskQueue: string;
  hostQueue: string;
  stop(): Promise<void>;
}

/**
 * Workers on a task queue of this test file's own, against the shared dev server; `provider`: the sandbox they run
 * episodes in (default this host's Docker engine). `taskQueue` is the shared queue they poll (a sandbox's own).
 */
export async function startTestWorkers(name: string, opts: { provider?: SandboxProvider } = {}): Promise<TestCluster> {
  const { address } = temporalAddress();
  const suffix = `${name}-${randomBytes(3).toString('hex')}`;
  const given = opts.provider ? await createHostServices({ provider: opts.provider, hostQueueSuffix: suffix }) : undefined;
  const { workers, connection: native, sharedQueue: taskQueue, hostQueue, deps } = await createWorkers({ address, taskQueue: `test-${suffix}`, hostQueueSuffix: suffix, sharedExtras: batchJobFilesActivity() }, given);
  const running = workers.map((w) => w.run());
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  return {
    client, connection, taskQueue, hostQueue,
    async stop() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running);
      await releaseHostServices(deps);
      await native.close();
      await connection.close();
    },
  };
}

/**
 * A worker of Berth's workflows with scripted activities on a queue of the test's own, and a client. Each scripted
 * activity has the type of the real one it stands for.
 */
export async function startScriptedWorker(queue: string, activities: Partial<SharedActivities & HostActivities & BatchJobFilesActivity>): Promise<{ client: Client; stop(): Promise<void> }> {
  installRuntime();
  const { address } = temporalAddress();
  const native = await NativeConnection.connect({ address });
  // Heartbeats throttled as the real worker's (src/worker.ts): a cancelled activity hears of it within 3 s.
  const worker = await Worker.create({ connection: native, taskQueue: queue, workflowBundle: await workflowBundle(), activities, maxHeartbeatThrottleInterval: '3 seconds' });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  return {
    client: new Client({ connection }),
    async stop() {
      worker.shutdown();
      await running;
      await native.close();
      await connection.close();
    },
  };
}

/** Runs `files` as one batch on `cluster` (at concurrency 4, warnings dropped) and answers its rows by task id. */
export async function rowsByTask(cluster: TestCluster, files: Record<string, string>, resultsPrefix: string): Promise<Map<string, ResultRow>> {
  const handle = await startBatch({
    dataset: writeDataset(files), resultsDir: mkdtempSync(join(tmpdir(), resultsPrefix)), taskQueue: cluster.taskQueue, client: cluster.client,
    concurrency: 4, logger: { warn: () => undefined },
  });
  return new Map((await handle.wait()).rows.map((row) => [row.task_id, row]));
}
