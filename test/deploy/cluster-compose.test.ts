import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startBatch } from '../../src/client/batch.ts';
import { temporalAnswers, waitFor } from '../../src/server/health.ts';
import { repoRoot } from '../helpers/cli.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';
import { clusterScript } from '../helpers/temporal-server.ts';
import { buildLocalWorkerImage } from '../helpers/worker-image.ts';
import { noContainersLeft } from '../helpers/docker.ts';

const run = promisify(execFile);

// docker-compose.yaml brought up as a user would, with every image made here instead of pulled (no registry):
// PostgreSQL and Temporal from the binaries of scripts/setup-temporal-cluster.sh, the UI likewise, the worker from the
// repository's Dockerfile. Its own ports, project name and BERTH_HOME, beside the dev server and the test cluster.
const PROJECT = 'berth-compose-test';
const PORT = 17233;
const UI_PORT = 18233;

describe('docker-compose.yaml run for real (Temporal on PostgreSQL, the UI, a Berth worker)', () => {
  let env: NodeJS.ProcessEnv = {};
  let connection: Connection | undefined;
  const compose = (...args: string[]) => run('docker', ['compose', '-f', join(repoRoot, 'docker-compose.yaml'), '-p', PROJECT, ...args], { env, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 });
  afterAll(async () => {
    await connection?.close();
    if (env.POSTGRES_IMAGE) await compose('down', '-v', '--timeout', '45').catch((err: Error) => console.error(`compose down: ${err.message}`));
  }, 180_000);

  it('comes up and runs a batch to the end', async () => {
    const images = Object.fromEntries((await clusterScript('--images')).trim().split('\n').at(-1)!.split(' ').map((kv) => kv.split('=') as [string, string]));
    await buildLocalWorkerImage('berth-worker:compose-test');
    const dataset = writeDataset({ ...echoTask('one', 'first'), ...echoTask('two', 'second') });
    env = {
      ...process.env, ...images, BERTH_WORKER_IMAGE: 'berth-worker:compose-test', TEMPORAL_PORT: String(PORT), TEMPORAL_UI_PORT: String(UI_PORT),
      // The worker reaches Temporal by its service name (this project's TEMPORAL_ADDRESS is the test cluster's).
      TEMPORAL_ADDRESS: 'temporal:7233', BERTH_DATASETS: dataset, BERTH_HOST_HOME: mkdtempSync(join(tmpdir(), 'berth-compose-home-')), BERTH_WORKER_SLOTS: '2',
    };
    await compose('up', '-d', '--no-build');
    const address = `127.0.0.1:${PORT}`;
    expect(await waitFor(() => temporalAnswers(address), 180_000, 1000), `Temporal at ${address}`).toBe(true);
    connection = await Connection.connect({ address });
    // The worker registers Berth's namespace and search attributes when it starts (src/cli/worker.ts).
    const registered = await waitFor(async () => {
      const sa = await connection!.operatorService.listSearchAttributes({ namespace: 'default' }).catch(() => undefined);
      return sa?.customAttributes?.BerthBatch !== undefined;
    }, 180_000, 1000);
    if (!registered) throw new Error(`the compose worker did not register Berth's search attributes:\n${(await compose('logs', '--tail', '40', 'worker')).stdout}`);

    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-compose-results-')), client: new Client({ connection }), concurrency: 2, logger: { warn: () => undefined } });
    const summary = await handle.wait();
    expect(summary.rows.map((r) => [r.task_id, r.reward]).sort()).toEqual([['one', 1], ['two', 1]]);
    expect(summary.metrics).toMatchObject({ scored: 2, masked: 0, failed: 0 });
    await noContainersLeft(`berth.batch=${summary.batchId}`, 30_000);
    // The UI made here serves the cluster's namespace.
    const settings = await fetch(`http://127.0.0.1:${UI_PORT}/api/v1/settings`);
    expect(settings.status).toBe(200);
    const namespaces = await fetch(`http://127.0.0.1:${UI_PORT}/api/v1/namespaces`).then((r) => r.json()) as { namespaces?: { namespaceInfo?: { name?: string } }[] };
    expect(namespaces.namespaces?.map((n) => n.namespaceInfo?.name)).toContain('default');
  }, 1_500_000);
});
