// Keeps a batch's results folder a Harbor job directory while rows arrive: each closed attempt becomes a trial folder
// at once (its files from this disk, or moved from the host that ran it), and result.json follows them (result-pace.ts).
import type { Client } from '@temporalio/client';
import { existsSync, readFileSync } from 'node:fs';
import { loadBerthConfig } from '../../config/berth-config.ts';
import { holdsManifest, openStore, readManifest, uploadJobFiles, type ResultsStore } from '../../store/index.ts';
import { join } from 'node:path';
import type { BatchInput, BatchProgress, ResultRow } from '../../workflows/types.ts';
import { batchWorkflowId, hostQueueOf, startInput } from '../episodes.ts';
import { fetchHostFolder } from '../host-files.ts';
import { HarborJobDir } from './job-dir.ts';
import { jobMetaOf, type JobMeta } from './job-meta.ts';
import type { TrialFiles } from './trial-files.ts';
import type { HarborTrialResult } from './types.ts';
import { PacedWrites } from './result-pace.ts';

/** How often the batch is asked how many episodes run, for result.json's n_running_trials while it runs. */
const RUNNING_ASKED_EVERY_MS = 2_000;
/** An answer later than this is not waited for: the count last known is written. */
const RUNNING_ANSWER_MS = 2_000;

export class JobRecorder {
  private readonly trials = new Map<string, HarborTrialResult>();
  /** The attempts (workflow and run id) that have a trial folder. */
  private readonly attempts = new Set<string>();
  private writes: Promise<unknown> = Promise.resolve();
  private readonly result = new PacedWrites((write) => { this.writes = this.writes.then(write).catch(() => undefined); });

  /** berth.toml's [results] store on this machine: trials are read from it, and the job's files written to it. */
  private readonly store: ResultsStore | null = openStore(loadBerthConfig().config);

  private constructor(readonly client: Client, readonly job: HarborJobDir, readonly meta: JobMeta) {
    for (const t of job.readTrials()) this.add(t);
  }

  /** The batch's job directory: config.json from the batch's input (given, or read from its workflow's history). */
  static async open(client: Client, batchId: string, dir: string, input?: BatchInput): Promise<JobRecorder> {
    const job = new HarborJobDir(dir);
    let meta = job.readMeta();
    if (!meta || input) {
      const batch = client.workflow.getHandle(batchWorkflowId(batchId));
      const described = await batch.describe();
      const started = input ?? await startInput<BatchInput>(client, batchWorkflowId(batchId));
      meta = jobMetaOf(started, dir, described.startTime.toISOString());
      job.writeConfig(meta);
    }
    const recorder = new JobRecorder(client, job, meta);
    if (!existsSync(job.resultPath)) {
      // A batch this client just started runs none yet (and asking it would wait for its first workflow task).
      if (!input) await recorder.askRunning();
      recorder.result.timed(() => recorder.writeResult(null, 0));
    }
    // While the batch runs, its own worker writes the store's result.json, rollouts.jsonl and metrics.json (they were
    // written by this client too, counting none running, and a write of this client's could land after a newer one of
    // the batch's). The config and the skipped tasks are this client's to write.
    if (recorder.store) recorder.upload(['config.json', 'skipped.json']);
    return recorder;
  }

  /** Resolves once the files written and uploaded so far are (startBatch waits, so they are there before any of the batch's). */
  flushed(): Promise<void> {
    return this.writes.then(() => undefined);
  }

  /**
   * The attempt's trial folder (once per run: a row already written is not copied again). result.json follows soon
   * after: rewriting it costs time in proportion to the trials, so it is not rewritten once per row (result-pace.ts).
   */
  record(row: ResultRow): Promise<void> {
    const next = this.writes.then(async () => {
      if (this.attempts.has(attemptKey(row.workflow_id, row.run_id))) return;
      this.add(await this.writeTrial(row));
      this.result.soon(() => this.writeResult(null, 0));
      // Not waited for: result.json follows the trial folder at once, with the count last known, and again if it changed.
      void this.askRunning().then((changed) => { if (changed && !this.finishing) this.result.soon(() => this.writeResult(null, 0)); });
    });
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** result.json once the batch is collected: its close time, and the episodes that failed (no row, no trial). */
  finish(failedEpisodes: number): Promise<void> {
    this.finishing = true;
    this.result.cancel();
    const next = this.writes.then(async () => {
      await this.asking;
      const described = await this.client.workflow.getHandle(batchWorkflowId(this.meta.batchId)).describe().catch(() => undefined);
      const closed = described && described.status.name !== 'RUNNING' ? (described.closeTime ?? new Date()).toISOString() : null;
      this.result.timed(() => this.writeResult(closed, failedEpisodes, true));
    });
    this.writes = next.catch(() => undefined);
    return next;
  }

  private add(t: HarborTrialResult): void {
    this.trials.set(t.trial_name, t);
    this.attempts.add(attemptKey(t.berth.workflow_id, t.berth.run_id));
  }

  private writeResult(finishedAt: string | null, failedEpisodes: number, last = false): void {
    const skippedPath = join(this.job.dir, 'skipped.json');
    let skippedTasks = 0;
    try {
      if (existsSync(skippedPath)) skippedTasks = (JSON.parse(readFileSync(skippedPath, 'utf8')) as unknown[]).length;
    } catch { /* an unreadable skipped.json counts none */ }
    this.job.writeResult(this.meta, [...this.trials.values()], {
      finishedAt, updatedAt: new Date().toISOString(), running: finishedAt === null ? this.running : 0, failedEpisodes, skippedTasks,
    });
    // The collected batch's files: after the batch's own last write (it writes before it closes), and the same rows.
    if (this.store && last && finishedAt !== null) this.upload();
  }

  private upload(names?: Parameters<typeof uploadJobFiles>[3]): void {
    const store = this.store!;
    this.writes = this.writes.then(() => uploadJobFiles(store, this.meta.batchId, this.job.dir, names)).catch((err: unknown) => {
      this.storeError = `the job's files were not written to the results store: ${(err as Error).message}`;
    });
  }

  /** Episodes the batch runs, as it last said (its progress query); 0 until it answers. */
  private running = 0;
  private runningAskedAt = -Infinity;
  /** finish() was called: no paced write of an unfinished result.json after it. */
  private finishing = false;
  /**
   * The last running-count question, answered or not: askRunning stops waiting for it, but finish() waits, so no call
   * of the client is still being retried once the batch's files are written (a caller may close its connection then,
   * and the client's retry would throw in a timer).
   */
  private asking: Promise<unknown> = Promise.resolve();

  /**
   * Asks the running batch how many episodes run, at most every RUNNING_ASKED_EVERY_MS, and never waits long: a
   * closed batch is not asked (a query would replay it on a worker), and a batch whose workers are down keeps the
   * count last known. Answers whether the count changed.
   */
  private async askRunning(): Promise<boolean> {
    if (Date.now() - this.runningAskedAt < RUNNING_ASKED_EVERY_MS) return false;
    this.runningAskedAt = Date.now();
    const batch = this.client.workflow.getHandle(batchWorkflowId(this.meta.batchId));
    const asked = (async () => {
      if ((await batch.describe()).status.name !== 'RUNNING') return 0;
      return (await batch.query<BatchProgress>('progress')).running;
    })().catch(() => undefined);
    this.asking = asked;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((r) => { timer = setTimeout(() => r(undefined), RUNNING_ANSWER_MS).unref(); });
    const running = await Promise.race([asked, late]);
    clearTimeout(timer);
    if (running === undefined || running === this.running) return false;
    this.running = running;
    return true;
  }

  /** The last failed write of the job's files to the store, if any (`berth results` says it). */
  storeError: string | undefined;

  private async writeTrial(row: ResultRow): Promise<HarborTrialResult> {
    const handle = this.client.workflow.getHandle(row.workflow_id, row.run_id);
    const d = await handle.describe().catch(() => undefined);
    const times = { startedAt: d?.startTime.toISOString() ?? null, finishedAt: d?.closeTime?.toISOString() ?? null };
    let files: TrialFiles;
    let note = (placed: string) => placed;
    const manifest = this.store && row.logs_dir && row.store_key ? await readManifest(this.store, row.store_key).catch(() => null) : null;
    if (!row.logs_dir) files = { none: 'no files: the episode stopped before its sandbox was seeded' };
    // The attempt's folder on this disk, whole by its manifest's sizes, is copied: reading it back from the store
    // cost the store and this client a request per file, which slowed a batch collected as it ran.
    else if (manifest && holdsManifest(row.logs_dir, manifest)) {
      files = { local: row.logs_dir };
      note = (placed) => `${placed} (the files the results store holds, s3://${this.store!.bucket}/${row.store_key})`;
    } else if (this.store && row.store_key && manifest) files = { stored: { store: this.store, key: row.store_key, manifest } };
    else if (existsSync(row.logs_dir)) files = { local: row.logs_dir };
    else {
      const queue = d ? await hostQueueOf(this.client, row.workflow_id, d.taskQueue) : null;
      if (!queue || !d) files = { none: `${row.logs_dir} is on host ${row.host ?? 'unknown'}, whose queue its history does not name` };
      else {
        const got = await fetchHostFolder(this.client, { queue, taskQueue: d.taskQueue, dir: row.logs_dir })
          .catch((err: unknown) => ({ missing: `host queue ${queue} did not answer: ${(err as Error).message}` }));
        files = Buffer.isBuffer(got) ? { archive: got } : { none: got.missing };
        note = (placed) => `${placed} through queue ${queue}`;
      }
    }
    return this.job.writeTrial(row, this.meta, times, files, note);
  }
}

const attemptKey = (workflowId: string, runId: string) => `${workflowId}\0${runId}`;
