// Issue 24: a batch whose episodes ran on two hosts gives one complete job directory on the machine that collects it,
// with no shared filesystem: `berth results` runs where neither host's BERTH_HOME is visible (a mount namespace with
// an empty tmpfs over each), so every episode's files come through its host's queue (docs/deployment.md, Moving
// files). And a batch whose worker is killed with -9 midway still leaves a job directory Harbor's models read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { berth, repoRoot } from '../helpers/cli.ts';
import { startEngines, type Engines } from '../helpers/engines.ts';
import { readWithHarbor } from '../helpers/harbor.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { testHostQueue } from '../helpers/host-slots.ts';
import { hostPollers } from '../../src/config/pollers.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { ownWorkerQueues, startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';

const ADDRESS = '127.0.0.1:7233';

describe('two hosts, no shared filesystem: one job directory where the batch is collected', () => {
  const suffix = `h24-hosts-${randomBytes(3).toString('hex')}`;
  const env = { TEMPORAL_ADDRESS: ADDRESS, BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_WORKER_SLOTS: '2' };
  const homes = [mkdtempSync(join(tmpdir(), 'berth-host-a-')), mkdtempSync(join(tmpdir(), 'berth-host-b-'))];
  let engines: Engines | undefined;
  const workers: WorkerProcess[] = [];
  let connection: Connection;
  beforeAll(async () => {
    engines = await startEngines(1);
    connection = await Connection.connect({ address: ADDRESS });
  }, 240_000);
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await connection?.close();
    await engines?.stop();
  }, 180_000);

  it('every trial has its agent/ and verifier/ files, moved from the host that ran it', async () => {
    workers.push(startWorkerProcess({ ...env, BERTH_HOME: homes[0]!, BERTH_HOST_NAME: 'host-a' }));
    workers.push(startWorkerProcess({ ...env, BERTH_HOME: homes[1]!, BERTH_HOST_NAME: 'host-b', DOCKER_HOST: engines!.engines[0]!.dockerHost }));
    // Both hosts poll before the batch starts: on a loaded machine the second worker can take longer to come up than
    // the first takes to run all four episodes, and then the batch never reaches a second host.
    const queues = [await testHostQueue(suffix), await testHostQueue(suffix, engines!.engines[0]!.docker)];
    for (const q of queues) {
      await waitUntil(async () => (await hostPollers(ADDRESS, 'default', q)).length > 0, 120_000, `a worker polling ${q}`)
        .catch((err: Error) => { throw new Error(`${err.message}\n${workers.map((w) => w.output()).join('\n---\n')}`); });
    }
    const client = new Client({ connection });
    const resultsDir = join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'two-hosts');
    const handle = await startBatch({ dataset: writeDataset(sleepyTasks(4, 3)), concurrency: 4, resultsDir, taskQueue: env.BERTH_TASK_QUEUE, client });
    await client.workflow.getHandle(`berth/${handle.batchId}`).result();

    const r = await berth(['results', handle.batchId, '--results', resultsDir, '--json'], env, 180_000, repoRoot, homes);
    expect(r.code, r.stderr).toBe(0);
    const rows = (JSON.parse(r.stdout) as { rows: Array<{ host: string; reward: number; logs_dir: string }> }).rows;
    expect(rows.map((x) => x.reward)).toEqual([1, 1, 1, 1]);
    expect(new Set(rows.map((x) => x.host)).size).toBe(2);
    for (const x of rows) expect(homes.some((h) => x.logs_dir.startsWith(h))).toBe(true);

    const read = await readWithHarbor(resultsDir);
    expect(read.errors).toEqual([]);
    expect(read.trials).toHaveLength(4);
    for (const t of read.trials) {
      expect(t.trajectories).toEqual(['agent/trajectory.json']);
      expect(readFileSync(join(resultsDir, t.name, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
      const berth = (JSON.parse(readFileSync(join(resultsDir, t.name, 'result.json'), 'utf8')) as { berth: { files: string } }).berth;
      expect(berth.files).toMatch(/^moved from the host that ran it \(\d+ bytes\) through queue berth-host-/);
    }
    await handle.close();
  }, 300_000);
});

describe('a worker killed with -9 midway', () => {
  const own = ownWorkerQueues('h24-kill');
  afterAll(() => own.stop(), 120_000);

  it("leaves a job directory that Harbor's models read, with the trials that closed before", async () => {
    const client = await own.client();
    const worker = own.startWorker();
    const resultsDir = join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'killed');
    const handle = await startBatch({ dataset: writeDataset(sleepyTasks(4, 4)), concurrency: 1, resultsDir, taskQueue: own.env.BERTH_TASK_QUEUE, client });
    const collecting = handle.rows();
    const trials = () => (existsSync(resultsDir) ? readdirSync(resultsDir).filter((n) => /^t\d__/.test(n) && existsSync(join(resultsDir, n, 'result.json'))) : []);
    await waitUntil(() => trials().length >= 1, 180_000, 'a first trial folder');
    worker.kill9();

    const read = await readWithHarbor(resultsDir);
    expect(read.errors).toEqual([]);
    expect(read.n_total_trials).toBe(4);
    expect(read.trials.length).toBeGreaterThanOrEqual(1);
    expect(read.stats.n_completed_trials).toBe(read.trials.length);
    // The episode running when the trial was written (concurrency 1) is counted running, from the batch's progress.
    expect(read.stats.n_running_trials).toBeLessThanOrEqual(1);
    expect(read.stats.n_pending_trials + read.stats.n_running_trials).toBe(4 - read.trials.length);

    // Tidy up: a new worker lets the batch be cancelled and its sandbox removed.
    own.startWorker();
    await handle.cancel();
    await collecting;
    await noContainersLeft(`berth.batch=${handle.batchId}`, 120_000);
  }, 300_000);
});
