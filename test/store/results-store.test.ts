// Issue 39: results that outlive their hosts. A batch on two hosts (two Docker engines, two BERTH_HOMEs) with
// [results] store set writes every attempt's files to a real SeaweedFS S3 server as its episode closes. Then both
// workers are killed. Before anyone collects the batch, `berth report` on a machine with only the store finds the job
// files the batch wrote there itself, and every trial. Then `berth results` runs where neither host's BERTH_HOME is
// visible: every trial's files come from the store, byte for byte what the hosts wrote, and Harbor's own models read
// the job directory. The store's secret appears in no row, no log file and no workflow history.
import { describe, expect, it } from 'vitest';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes, type EpisodeRef } from '../../src/client/episodes.ts';
import { trialName } from '../../src/client/harbor-job/names.ts';
import { trialPathOf } from '../../src/client/harbor-job/layout.ts';
import { hostPollers } from '../../src/config/pollers.ts';
import { storeLocationOf } from '../../src/config/results-store.ts';
import { filesUnder, readManifest, ResultsStore } from '../../src/store/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { berth, repoRoot } from '../helpers/cli.ts';
import { readWithHarbor } from '../helpers/harbor.ts';
import { testHostQueue } from '../helpers/host-slots.ts';
import { ADDRESS, storeOnTwoHosts } from '../helpers/store-hosts.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { startWorkerProcess, waitUntil } from '../helpers/worker-process.ts';

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Every file under `dir` (recursively) whose text or bytes hold `secret`. */
function filesHolding(dir: string, secret: string): string[] {
  if (!existsSync(dir)) return [];
  return filesUnder(dir).filter((p) => statSync(join(dir, p)).size < 64 * 1024 * 1024 && readFileSync(join(dir, p)).includes(secret));
}

describe('a results store: every trial outlives the hosts that ran it', () => {
  const h = storeOnTwoHosts('i39-store', 'runs');
  const { suffix, homes, env, workers } = h;

  it('collects every file from the store with both workers gone, and never shows the secret', async () => {
    workers.push(startWorkerProcess({ ...env, BERTH_HOME: homes[0]!, BERTH_HOST_NAME: 'host-a' }));
    workers.push(startWorkerProcess({ ...env, BERTH_HOME: homes[1]!, BERTH_HOST_NAME: 'host-b', DOCKER_HOST: h.engines!.engines[0]!.dockerHost }));
    const queues = [await testHostQueue(suffix), await testHostQueue(suffix, h.engines!.engines[0]!.docker)];
    for (const q of queues) {
      await waitUntil(async () => (await hostPollers(ADDRESS, 'default', q)).length > 0, 120_000, `a worker polling ${q}`)
        .catch((err: Error) => { throw new Error(`${err.message}\n${workers.map((w) => w.output()).join('\n---\n')}`); });
    }
    const client = new Client({ connection: h.connection! });
    const handle = await startBatch({ dataset: writeDataset(sleepyTasks(4, 3)), concurrency: 4, taskQueue: env.BERTH_TASK_QUEUE, client,
      resultsDir: join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'on-hosts') });
    const batchRows = await client.workflow.getHandle(`berth/${handle.batchId}`).result() as unknown;
    expect(batchRows).toBeDefined();
    await handle.close();

    // What each host wrote, read from its own disk before the workers go.
    let listed: EpisodeRef[] = [];
    await waitUntil(async () => (listed = await listEpisodes(client, handle.batchId)).filter((e) => e.status === 'COMPLETED').length === 4, 60_000, 'four closed episodes listed');
    const episodes = listed.map((e) => e.workflowId);
    const rows = await Promise.all(episodes.map(async (id) => await client.workflow.getHandle(id).result() as ResultRow));
    expect(rows).toHaveLength(4);
    expect(new Set(rows.map((r) => r.host)).size).toBe(2);
    const store = new ResultsStore({ ...storeLocationOf(`s3://${h.s3!.bucket}/runs-${suffix}`), endpoint: h.s3!.endpoint, region: h.s3!.region, pathStyle: true, keepLocal: true },
      { accessKeyId: h.s3!.accessKeyId, secretAccessKey: h.s3!.secretAccessKey });
    const written = new Map<string, Map<string, string>>();
    for (const row of rows) {
      expect(row.store_error).toBeUndefined();
      expect(row.store_key).toMatch(new RegExp(`^runs-${suffix}/`));
      const manifest = await readManifest(store, row.store_key!);
      expect(manifest?.host).toBe(row.host);
      const files = new Map(filesUnder(row.logs_dir!).map((p) => [p, sha(join(row.logs_dir!, p))]));
      expect(files.size).toBeGreaterThan(0);
      expect(new Map(manifest!.files.map((f) => [f.path, f.sha256]))).toEqual(files);
      written.set(row.workflow_id, files);
    }
    store.destroy();

    // Both hosts go: their workers are killed, and neither BERTH_HOME is visible to `berth results`.
    for (const w of workers) w.kill9();

    // Nobody collected the batch (no client watched it, no `berth results` yet): the batch wrote its job files to the
    // store itself, and `berth report` on a machine with only the store makes the job and every trial from them.
    const unwatched = mkdtempSync(join(tmpdir(), 'berth-unwatched-'));
    const early = await berth(['report', handle.batchId], env, 180_000, unwatched, homes);
    expect(early.code, early.stderr).toBe(0);
    const earlyDir = join(unwatched, 'results', handle.batchId);
    const earlyRows = readFileSync(join(earlyDir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ResultRow);
    expect(earlyRows.map((r) => r.workflow_id).sort()).toEqual([...episodes].sort());
    const jobResult = JSON.parse(readFileSync(join(earlyDir, 'result.json'), 'utf8')) as { finished_at: string | null; stats: { n_completed_trials: number } };
    expect(jobResult.finished_at).not.toBeNull();
    expect(jobResult.stats.n_completed_trials).toBe(4);
    expect(JSON.parse(readFileSync(join(earlyDir, 'metrics.json'), 'utf8'))).toMatchObject({ batch_id: handle.batchId, scored: 4 });
    for (const row of rows) {
      const trial = join(earlyDir, trialName(row.task_id, row.workflow_id));
      for (const [path, digest] of written.get(row.workflow_id)!) {
        const placed = trialPathOf(path);
        if (placed) expect(sha(join(trial, placed)), `${trial}/${placed}`).toBe(digest);
      }
    }
    const resultsDir = join(mkdtempSync(join(tmpdir(), 'berth-jobs-')), 'from-store');
    const r = await berth(['results', handle.batchId, '--results', resultsDir, '--json'], env, 180_000, repoRoot, homes);
    expect(r.code, r.stderr).toBe(0);
    for (const row of rows) {
      const trial = join(resultsDir, trialName(row.task_id, row.workflow_id));
      const berthKeys = (JSON.parse(readFileSync(join(trial, 'result.json'), 'utf8')) as { berth: { files: string } }).berth;
      expect(berthKeys.files).toMatch(/^read from the results store \(s3:\/\//);
      for (const [path, digest] of written.get(row.workflow_id)!) {
        const placed = trialPathOf(path);
        if (placed) expect(sha(join(trial, placed)), `${trial}/${placed}`).toBe(digest);
      }
    }
    // Harbor 0.25's own models read the job directory written from the store.
    const read = await readWithHarbor(resultsDir);
    expect(read.errors).toEqual([]);
    expect(read.trials).toHaveLength(4);
    for (const t of read.trials) expect(t.trajectories).toEqual(['agent/trajectory.json']);
    // The job's files went to the store as well.
    const jobKeys = (await new ResultsStore({ ...storeLocationOf(`s3://${h.s3!.bucket}/runs-${suffix}`), endpoint: h.s3!.endpoint, region: h.s3!.region, pathStyle: true, keepLocal: true },
      { accessKeyId: h.s3!.accessKeyId, secretAccessKey: h.s3!.secretAccessKey }).list(`runs-${suffix}/${handle.batchId}/job/`)).map((o) => o.key.split('/').pop());
    expect(jobKeys).toEqual(expect.arrayContaining(['config.json', 'result.json', 'rollouts.jsonl', 'metrics.json']));

    // The secret: in no row, no log or file of either host or of the results folder, no workflow history.
    const secret = h.s3!.secretAccessKey;
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(readFileSync(join(resultsDir, 'rollouts.jsonl'), 'utf8')).not.toContain(secret);
    for (const w of workers) expect(w.output()).not.toContain(secret);
    for (const dir of [...homes, resultsDir]) expect(filesHolding(dir, secret)).toEqual([]);
    expect(r.stdout + r.stderr).not.toContain(secret);
    for (const id of [`berth/${handle.batchId}`, ...episodes]) {
      const history = await client.workflow.getHandle(id).fetchHistory();
      const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
      expect(bytes.includes(secret), id).toBe(false);
      expect(bytes.includes(h.s3!.accessKeyId), id).toBe(false);
    }
    expect(readdirSync(resultsDir).length).toBeGreaterThan(4);

    // `berth report` on a machine with no results folder: made from the store alone (job files and trials).
    const elsewhere = mkdtempSync(join(tmpdir(), 'berth-elsewhere-'));
    const rep = await berth(['report', handle.batchId], env, 180_000, elsewhere, homes);
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout.trim()).toBe(join(elsewhere, 'results', handle.batchId, 'report.html'));
    expect(readFileSync(join(elsewhere, 'results', handle.batchId, 'rollouts.jsonl'), 'utf8').trim().split('\n')).toHaveLength(4);
    for (const row of rows) {
      const trial = join(elsewhere, 'results', handle.batchId, trialName(row.task_id, row.workflow_id));
      for (const [path, digest] of written.get(row.workflow_id)!) {
        const placed = trialPathOf(path);
        if (placed) expect(sha(join(trial, placed)), `${trial}/${placed}`).toBe(digest);
      }
    }

    // `berth gc BATCH`: asks first (no terminal here: refused without --yes), then removes every object of the batch.
    const asked = await berth(['gc', handle.batchId], env, 60_000, elsewhere);
    expect(asked.code).not.toBe(0);
    expect(asked.stderr).toContain('pass --yes to remove them');
    const gc = await berth(['gc', handle.batchId, '--yes', '--json'], env, 60_000, elsewhere);
    expect(gc.code, gc.stderr).toBe(0);
    // Four manifests (a trivial trial's files ride inside its manifest) and the job's files.
    expect((JSON.parse(gc.stdout) as { stored: { removed: number } }).stored.removed).toBeGreaterThanOrEqual(4 + 4);
    const left = new ResultsStore({ ...storeLocationOf(`s3://${h.s3!.bucket}/runs-${suffix}`), endpoint: h.s3!.endpoint, region: h.s3!.region, pathStyle: true, keepLocal: true },
      { accessKeyId: h.s3!.accessKeyId, secretAccessKey: h.s3!.secretAccessKey });
    expect(await left.list(`runs-${suffix}/${handle.batchId}/`)).toEqual([]);
    left.destroy();
  }, 600_000);
});
