// Issue 39, an upload's failures (docs/deployment.md, A results store): a worker killed in the middle of an upload
// leaves nothing a reader takes for a trial (no manifest, no trial) and the retry on its restarted worker completes
// it; keep_local = false removes the host's copy only once the store has it all; a store that refuses the host's
// credentials is named on the row and by `berth status`, and the files stay on the host.
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { trialName } from '../../src/client/harbor-job/names.ts';
import { temporalAddress } from '../../src/config/temporal.ts';
import { attemptKey, readManifest, ResultsStore } from '../../src/store/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { berth, repoRoot } from '../helpers/cli.ts';
import type { S3Server } from '../helpers/s3-server.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';
import { forwardTcp } from '../helpers/tcp-forward.ts';
import { useStoreWorker } from '../helpers/store-worker.ts';
import { ownWorkerQueues, waitUntil } from '../helpers/worker-process.ts';

const BIG = 192 * 1024 * 1024;

/** One task whose test leaves a file of BIG random bytes among the verifier's logs (a multipart upload of 24 parts). */
const bigTask = (): Record<string, string> => ({
  'big/task.toml': BASE_TOML,
  'big/instruction.md': 'Write ok to out.txt\n',
  'big/solution/solve.sh': '#!/bin/bash\necho ok > out.txt\n',
  'big/tests/test.sh': `#!/bin/bash\nhead -c ${BIG} /dev/urandom > /logs/verifier/zz-big.bin\ngrep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n`,
});

describe('results store: an upload cut short, keep_local = false, a store that refuses', () => {
  const h = useStoreWorker('i39-fail', 'fail');
  const { own, config } = h;
  let s3: S3Server;
  let store: ResultsStore;
  let client: Client;
  let prefix: string;
  beforeAll(() => { ({ s3, store, client, prefix } = h); });

  // Each test's workers go when it ends, passed or not: the next test's worker alone polls the queues.
  afterEach(async () => { for (const w of own.workers) await w.stop(); }, 60_000);

  const runOne = async (dataset: string, taskQueue = own.env.BERTH_TASK_QUEUE, keepFinalState = false) => {
    const handle = await startBatch({ dataset, concurrency: 1, taskQueue, client, prepare: false, keepFinalState,
      resultsDir: join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'r') });
    await handle.close();
    return handle.batchId;
  };
  const rowOf = async (batchId: string): Promise<ResultRow> => {
    let id = '';
    await waitUntil(async () => { id = (await listEpisodes(client, batchId))[0]?.workflowId ?? ''; return id !== ''; }, 60_000, 'the episode listed');
    return await client.workflow.getHandle(id).result() as ResultRow;
  };

  it('a worker killed mid-upload leaves no trial, and its retry completes it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'berth-host-'));
    // The first worker reaches the store through a forwarder that stops passing its bytes after 3 parts' worth: the
    // upload stays under way until the worker is killed, however fast the machine (a poll raced it before).
    const endpoint = new URL(s3.endpoint);
    const gate = await forwardTcp('127.0.0.1', { host: endpoint.hostname, port: Number(endpoint.port) }, { holdAfter: 3 * 8 * 1024 * 1024 });
    onTestFinished(() => gate.close());
    const gated = s3.berthToml(prefix).replace(s3.endpoint, `http://${gate.address}`);
    const workerEnv = { BERTH_HOME: home, BERTH_CONFIG: config('host', s3.berthToml(prefix)) };
    const worker = own.startWorker({ ...workerEnv, BERTH_CONFIG: config('host-gated', gated) });
    const batchId = await runOne(writeDataset(bigTask()));
    const c = s3.client();
    // The big file's upload under way (its multipart upload begun, the gate holding the rest), the manifest not written.
    await waitUntil(async () => {
      const keys = (await store.list(`${prefix}/`)).map((o) => o.key);
      const uploads = (await c.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: `${prefix}/` }))).Uploads ?? [];
      if (keys.some((k) => !k.includes('/files/') && k.endsWith('/manifest.json'))) throw new Error(`the upload finished before the worker could be killed: ${keys.join(', ')}`);
      return gate.held && uploads.length > 0;
    }, 300_000, `an upload under ${prefix}/ held at the gate`).catch((err: Error) => { throw new Error(`${err.message}\n${worker.output()}`); });
    worker.kill9();
    const [episode] = await listEpisodes(client, batchId);
    const runId = (await client.workflow.getHandle(episode!.workflowId).describe()).runId;
    const attempt = attemptKey({ prefix }, batchId, episode!.workflowId, runId);
    // Part of the attempt is there (the big file's parts; the small files wait to ride in the manifest), no manifest.
    const begun = (await c.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket, Prefix: `${attempt}/files/` }))).Uploads ?? [];
    c.destroy();
    expect((await store.list(`${attempt}/files/`)).length + begun.length).toBeGreaterThan(0);
    expect(await readManifest(store, attempt)).toBeNull();

    // The restarted worker (same BERTH_HOME) takes the upload's retry and completes it.
    own.startWorker(workerEnv);
    const row = await rowOf(batchId);
    expect(row.reward).toBe(1);
    expect(row.store_error).toBeUndefined();
    expect(row.store_key).toBe(attempt);
    const m = await readManifest(store, attempt);
    const big = m!.files.find((f) => f.path.endsWith('zz-big.bin'));
    expect(big?.size).toBe(BIG);
    expect(big?.sha256).toBe(createHash('sha256').update(readFileSync(join(row.logs_dir!, big!.path))).digest('hex'));
  }, 900_000);

  it('keep_local = false: the host keeps nothing once the store has the attempt, and results and a regrade come from the store', async () => {
    const home = mkdtempSync(join(tmpdir(), 'berth-host-'));
    own.startWorker({ BERTH_HOME: home, BERTH_CONFIG: config('host-no-copy', s3.berthToml(prefix, { keepLocal: false })) });
    const batchId = await runOne(writeDataset(echoTask('hello')), own.env.BERTH_TASK_QUEUE, true);
    const row = await rowOf(batchId);
    expect(row.reward).toBe(1);
    expect(row.store_key).toBeDefined();
    expect(existsSync(row.logs_dir!)).toBe(false);
    expect((await readManifest(store, row.store_key!))!.files.length).toBeGreaterThan(0);
    const resultsDir = join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'no-copy');
    // A client of the test's server (TEMPORAL_ADDRESS): with none, a CLI call starts the embedded detached worker,
    // which would poll this test's queues from another BERTH_HOME and could take the regrade's upload.
    const cli = { ...own.env, BERTH_CONFIG: process.env.BERTH_CONFIG!, TEMPORAL_ADDRESS: temporalAddress().address };
    const r = await berth(['results', batchId, '--results', resultsDir, '--json'], cli, 120_000, repoRoot);
    expect(r.code, r.stderr).toBe(0);
    const trial = join(resultsDir, trialName(row.task_id, row.workflow_id));
    expect(readFileSync(join(trial, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    // A regrade on the same host: the agent's files come from the store (the host's copy is gone), the state from the
    // image it kept; the regrade's own files go to the store and leave the host as well.
    const rg = await berth(['regrade', batchId, '--results', resultsDir, '--json'], cli, 180_000, repoRoot);
    expect(rg.code, rg.stderr + rg.stdout).toBe(0);
    const out = JSON.parse(rg.stdout) as { skipped: unknown[]; failed: unknown[]; rows: ResultRow[] };
    expect([out.skipped, out.failed]).toEqual([[], []]);
    expect(out.rows).toMatchObject([{ attempt: 2, reward: 1, regraded_from: row.workflow_id, mask_sample: false }]);
    expect(out.rows[0]!.store_key, JSON.stringify(out.rows[0])).toBeDefined();
    expect(existsSync(out.rows[0]!.logs_dir!)).toBe(false);
    const regradeTrial = join(resultsDir, trialName(row.task_id, out.rows[0]!.workflow_id));
    expect(readFileSync(join(regradeTrial, 'agent', 'trajectory.json'), 'utf8')).toBe(readFileSync(join(trial, 'agent', 'trajectory.json'), 'utf8'));
    expect((await berth(['gc', '--batch', batchId], { ...own.env, TEMPORAL_ADDRESS: cli.TEMPORAL_ADDRESS }, 60_000, repoRoot)).code).toBe(0);
  }, 600_000);

  it('a store that refuses the host is named on the row and by berth status; the files stay on the host', async () => {
    const home = mkdtempSync(join(tmpdir(), 'berth-host-'));
    const wrongSecret = `wrong-${randomBytes(12).toString('hex')}`;
    const toml = s3.berthToml(prefix).replace(s3.secretAccessKey, wrongSecret);
    // Queues of its own: no worker of the tests before (right credentials) may take its upload.
    const refused = ownWorkerQueues('i39-refused');
    try {
      const worker = refused.startWorker({ BERTH_HOME: home, BERTH_CONFIG: config('host-wrong', toml) });
      const row = await rowOf(await runOne(writeDataset(echoTask('hello')), refused.env.BERTH_TASK_QUEUE));
      // The score stands: the store is Berth's side, not the agent's.
      expect(row.reward).toBe(1);
      expect(row.mask_sample).toBe(false);
      expect(row.store_key, worker.output()).toBeUndefined();
      expect(row.store_error).toMatch(/^the files were not stored in s3:\/\/.* \(they stay on .*\): .*SignatureDoesNotMatch/);
      expect(existsSync(join(row.logs_dir!, 'turn-1', 'verifier', 'reward.txt'))).toBe(true);
      const status = await berth(['status', row.workflow_id.split('/')[1]!], { ...refused.env }, 60_000, repoRoot);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`1 attempt(s) whose files are not in s3://${s3.bucket}/${prefix}`);
      expect(status.stdout).toContain(row.workflow_id);
      for (const secret of [wrongSecret, s3.secretAccessKey]) {
        expect(JSON.stringify(row)).not.toContain(secret);
        expect(worker.output()).not.toContain(secret);
        const history = Buffer.from(temporal.api.history.v1.History.encode(await client.workflow.getHandle(row.workflow_id).fetchHistory()).finish());
        expect(history.includes(secret)).toBe(false);
      }
    } finally {
      await refused.stop();
    }
  }, 600_000);
});
