// A batch's job files in the results store with no client watching it (docs/deployment.md, A results store): made from
// the rows Temporal holds, by the code `berth results` uses (ResultsFolder, HarborJobDir), and written to
// `<prefix>/<batch>/job/`. A worker runs this for the batch (activity writeBatchJobFiles, registered by `berth
// worker`) soon after episodes close (at most every 30 s), at each run's start after a continue-as-new and at the
// batch's end, so `berth view` and `berth report` on another machine find the job's files even when nobody collected
// the batch.
import { Context, heartbeat } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadBerthConfig } from '../config/berth-config.ts';
import { jobFileKey, ResultsStore, storeAt, uploadJobFiles } from '../store/index.ts';
import type { BatchInput, BatchJobFilesActivity, ResultRow } from '../workflows/types.ts';
import { batchWorkflowId, listEpisodes, newestEpisodes, parseEpisodeId, startInput, waitForEpisode, type EpisodeRef } from './episodes.ts';
import { episodeWorkflowId } from '../workflows/public.ts';
import { HarborJobDir } from './harbor-job/job-dir.ts';
import { jobMetaOf, type JobMeta } from './harbor-job/job-meta.ts';
import { trialResultOf } from './harbor-job/trial.ts';
import type { HarborJobConfig, HarborTrialResult } from './harbor-job/types.ts';
import { ResultsFolder } from './results.ts';

export interface BatchJobFiles {
  /** Rows in rollouts.jsonl (the newest attempt of each closed episode). */
  rows: number;
  /** Attempts counted as trials of the job (earlier attempts too). */
  trials: number;
  files: number;
}

/** Episodes read at once (each a result call). */
const READS_AT_ONCE = 8;

/** How long a write of the episodes closed so far waits for the listing to show as many closed as the batch counted. */
const LISTING_WAIT_MS = 20_000;

const parse = <T>(text: string | null): T | null => {
  try { return text === null ? null : JSON.parse(text) as T; } catch { return null; }
};
const getText = (store: ResultsStore, batchId: string, name: Parameters<typeof jobFileKey>[2]): Promise<string | null> =>
  store.getText(jobFileKey(store.settings, batchId, name)).catch(() => null);

/** What the store already says of the batch: the meta its first client wrote in config.json, and skipped.json's length. */
async function storedJob(store: ResultsStore, batchId: string): Promise<{ meta: JobMeta | null; skipped: number }> {
  const config = await getText(store, batchId, 'config.json');
  const list = parse<unknown[]>(await getText(store, batchId, 'skipped.json'));
  return { meta: parse<HarborJobConfig & { berth?: { meta?: JobMeta } }>(config)?.berth?.meta ?? null, skipped: Array.isArray(list) ? list.length : 0 };
}

/** Whether the stored result.json is a finished job's (the batch's last write, or a client's after the batch closed). */
const storedFinished = async (store: ResultsStore, batchId: string): Promise<boolean> =>
  parse<{ finished_at?: string | null }>(await getText(store, batchId, 'result.json'))?.finished_at != null;

/** Attempts the listing shows closed, regrades aside (the batch counts neither a regrade nor an attempt twice). Pure. */
export const listedClosed = (listed: EpisodeRef[]): number => listed.filter((e) => !e.regrade && e.status !== 'RUNNING').length;

/** The batch's episodes, listed again (a while at most) until as many show closed as the batch counted. */
async function listAfterClosed(client: Client, batchId: string, closed: number | undefined, beat?: () => void): Promise<EpisodeRef[]> {
  const until = Date.now() + LISTING_WAIT_MS;
  let listed = await listEpisodes(client, batchId);
  while (closed !== undefined && listedClosed(listed) < closed && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 500));
    beat?.();
    listed = await listEpisodes(client, batchId);
  }
  return listed;
}

/**
 * Writes the batch's config.json, result.json, rollouts.jsonl and metrics.json to the store (skipped.json is its
 * starting client's). `final`: the batch's end, every episode waited for; else only the episodes closed so far count.
 * `beat` is called as episodes are read (an activity's heartbeat).
 */
export async function writeBatchJobFiles(
  client: Client, store: ResultsStore, batchId: string, opts: { final: boolean; closed?: number; beat?: () => void; signal?: AbortSignal },
): Promise<BatchJobFiles> {
  // A write of the episodes closed so far never replaces the finished job's files (a late retry of one, say).
  if (!opts.final && await storedFinished(store, batchId)) return { rows: 0, trials: 0, files: 0 };
  const stored = await storedJob(store, batchId);
  // The batch's start (its input is its history's first event) is read only when no client wrote config.json.
  const meta = stored.meta ?? jobMetaOf(await startInput<BatchInput>(client, batchWorkflowId(batchId)), resolve('results', batchId),
    (await client.workflow.getHandle(batchWorkflowId(batchId)).describe()).startTime.toISOString());
  // At the end, every (task, repeat)'s first attempt too, should the listing not show one yet (visibility lags).
  const all = withFirstAttempts(await listAfterClosed(client, batchId, opts.final ? undefined : opts.closed, opts.beat), opts.final ? meta : null);
  const running = all.filter((e) => e.status === 'RUNNING').length;
  const counted = opts.final ? all : all.filter((e) => e.status !== 'RUNNING');
  const read = await readAttempts(client, counted, opts.beat);
  const dir = mkdtempSync(join(tmpdir(), 'berth-job-files-'));
  try {
    const folder = new ResultsFolder(dir);
    const reported = newestEpisodes(counted).map((e) => rowOf(e, counted, read)).filter((r): r is ResultRow => r !== undefined);
    const failed = newestEpisodes(counted).length - reported.length;
    folder.finish(reported, failed, { batch_id: batchId, ...(meta.datasetName ? { dataset: meta.datasetName } : {}), ...(meta.agent ? { agent: meta.agent } : {}) });
    const job = new HarborJobDir(dir);
    job.writeConfig(meta);
    // The job's result.json counts trials by their rows; each trial's own times are not in it.
    const trials: HarborTrialResult[] = [...read.values()].flatMap((row) => (row ? [trialResultOf(row, meta, NO_TIMES, filesOf(store, row))] : []));
    // At the end the batch is still running (it closes once this is written): its close is now.
    job.writeResult(meta, trials, {
      finishedAt: opts.final ? new Date().toISOString() : null, updatedAt: new Date().toISOString(),
      running: opts.final ? 0 : running, failedEpisodes: failed, skippedTasks: stored.skipped,
    });
    // Reading the episodes took a while: an attempt the batch gave up on (timed out, retried) writes nothing, and a
    // write of the episodes closed so far does not replace the finished job's files written meanwhile.
    opts.signal?.throwIfAborted();
    if (!opts.final && await storedFinished(store, batchId)) return { rows: 0, trials: 0, files: 0 };
    const files = await uploadJobFiles(store, batchId, dir);
    return { rows: reported.length, trials: trials.length, files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const NO_TIMES = { startedAt: null, finishedAt: null };

/** The listed episodes, and the first attempt of each of the batch's (task, repeat) the listing lacks. Pure. */
export function withFirstAttempts(listed: EpisodeRef[], meta: Pick<JobMeta, 'batchId' | 'tasks' | 'repeats'> | null): EpisodeRef[] {
  if (!meta) return listed;
  const have = new Set(listed.map((e) => e.workflowId));
  const missing = meta.tasks.flatMap((t) => Array.from({ length: meta.repeats }, (_, i) => episodeWorkflowId(meta.batchId, t.taskId, i + 1)))
    .filter((id) => !have.has(id))
    .map((workflowId) => ({ workflowId, ...parseEpisodeId(workflowId)!, status: 'RUNNING', taskQueue: '', regrade: false }));
  return [...listed, ...missing];
}

/** Each closed (or, at the batch's end, each) attempt's row (undefined when it failed), a few at once. */
async function readAttempts(client: Client, episodes: EpisodeRef[], beat?: () => void): Promise<Map<string, ResultRow | undefined>> {
  const out = new Map<string, ResultRow | undefined>();
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, episodes.length) }, async () => {
    while (next < episodes.length) {
      const e = episodes[next++]!;
      out.set(e.workflowId, await waitForEpisode(client, e.workflowId));
      beat?.();
    }
  }));
  return out;
}

/** The reported row of a (task, repeat): a regrade that failed leaves the attempt before it reported (as collectRows does). */
function rowOf(e: EpisodeRef, all: EpisodeRef[], read: Map<string, ResultRow | undefined>): ResultRow | undefined {
  const row = read.get(e.workflowId);
  if (row || !e.regrade) return row;
  const before = newestEpisodes(all.filter((x) => x.taskId !== e.taskId || x.repeat !== e.repeat || x.attempt < e.attempt))
    .find((x) => x.taskId === e.taskId && x.repeat === e.repeat);
  return before ? rowOf(before, all, read) : undefined;
}

const filesOf = (store: ResultsStore, row: ResultRow): string =>
  row.store_key ? `in the results store (s3://${store.bucket}/${row.store_key})` : row.store_error ?? `on host ${row.host ?? 'unknown'}`;

/**
 * The activity `berth worker` registers on the shared queue (src/cli/worker.ts): the batch's store as this worker
 * reaches it (its berth.toml's endpoint and credentials), the worker's own Temporal client, a heartbeat per episode read.
 */
export function batchJobFilesActivity(): BatchJobFilesActivity {
  return {
    async writeBatchJobFiles(req) {
      const { settings, credentials } = storeAt(req.store, loadBerthConfig().config);
      const store = new ResultsStore(settings, credentials);
      try {
        return await writeBatchJobFiles(Context.current().client, store, req.batchId, { final: req.final, closed: req.closed, beat: () => heartbeat(), signal: Context.current().cancellationSignal });
      } finally {
        store.destroy();
      }
    },
  };
}
