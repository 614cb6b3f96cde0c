import type { Client } from '@temporalio/client';
import { basename, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { batchUiLink } from '../config/temporal.ts';
import type { AgentName, BatchInput, BatchProgress, EpisodeTraining, ModelLimits, ResultRow } from '../workflows/types.ts';
import { AGENT_NAMES } from '../config/agents.ts';
import { probeBeforeBatch } from './probe.ts';
import { BATCH_UPDATES, episodesOf, episodeWorkflowId } from '../workflows/public.ts';
import { BERTH_AGENT, BERTH_BATCH, BERTH_DATASET } from '../config/search-attributes.ts';
import { connect, type Connected } from './connect.ts';
import { collectRows } from './collect.ts';
import { batchWorkflowId, listEpisodes, NEVER_STARTED, waitForEpisode } from './episodes.ts';
import { retryEpisodes, type RetrySelection } from './retry.ts';
import { steerBatch } from './steer.ts';
import { regradeEpisodes, regradeResult, type RegradeSelection, type RegradesStarted } from './regrade.ts';
import { cancelEpisodes, type CancelledEpisodes, type EpisodeSelection } from './cancel-episodes.ts';
import { aheadOf, prepareInput, prepareTasks } from './prepare.ts';
import { loadDataset, toSkippedEntry } from '../task/index.ts';
import { loadBerthConfig, loaderOptions } from '../config/berth-config.ts';
import { withValidFields } from './task-data.ts';
import { ResultsFolder, metricsOf, type Metrics, type SkippedEntry } from './results.ts';
import { JobRecorder } from './harbor-job/recorder.ts';
import { sharedQueue } from '../config/index.ts';
import { trainingRefusal } from '../tokens/index.ts';

export interface StartBatchOptions {
  dataset: string;
  agent?: AgentName;
  agentArgs?: Record<string, string>;
  repeats?: number;
  concurrency?: number;
  resultsDir?: string;
  /** The folder the results folder goes in (`<jobsDir>/<batch id>`, Harbor's -o/--jobs-dir) when resultsDir is not given. */
  jobsDir?: string;
  imageAliases?: Record<string, string>;
  batchId?: string;
  /** The shared task queue (tests use their own). */
  taskQueue?: string;
  /** An existing client; otherwise one is connected to TEMPORAL_ADDRESS or the embedded server. */
  client?: Client;
  allowUnsupportedPairing?: boolean;
  /** Stop when any task is refused. */
  strict?: boolean;
  /** Only tasks whose id passes (--task GLOB). */
  taskFilter?: (taskId: string) => boolean;
  logger?: { warn(message: string): void };
  /** A berth.toml to read instead of ./berth.toml or BERTH_HOME/config.toml (docs/design.md section 7, Config file). */
  configFile?: string;
  /** Build or check every task's image first; a task whose image fails is skipped (stage prepare). Default true. */
  prepare?: boolean;
  /** Commit each shared-mode sandbox to an image after its last agent turn, so `regrade` can verify it again. */
  keepFinalState?: boolean;
  /** false: no host seeds sandboxes ahead for this batch (`berth run --no-warm-pool`; docs/performance-notes.md, The warm pool). */
  warmPool?: boolean;
  /** `provider/model` for an agent that calls a model (--model). */
  model?: string;
  /** Per episode (--max-tokens, --max-cost). */
  limits?: ModelLimits;
  /** Training mode: every episode's model calls go to this policy and leave token records (src/tokens). */
  training?: EpisodeTraining;
}

export interface BatchSummary { batchId: string; rows: ResultRow[]; metrics: Metrics; resultsDir: string; uiLink: string }

export const newBatchId = (dataset: string): string => {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${basename(resolve(dataset)).replace(/[^A-Za-z0-9_.-]/g, '_')}-${stamp}-${randomBytes(2).toString('hex')}`;
};

/** Row waiters beyond the batch's concurrency: the next episodes to start are already being watched. */
const EXTRA_WAITERS = 2;

export class BatchHandle {
  private recorder?: Promise<JobRecorder>;

  constructor(
    readonly batchId: string,
    readonly input: BatchInput | undefined,
    readonly results: ResultsFolder,
    readonly client: Client,
    private readonly owned?: Connected,
    readonly skipped: SkippedEntry[] = [],
  ) {}

  /** A handle on a batch started earlier (by `berth run --detach`, or another script). */
  static async attach(batchId: string, opts: { resultsDir?: string; client?: Client } = {}): Promise<BatchHandle> {
    const owned = opts.client ? undefined : await connect();
    const client = opts.client ?? owned!.client;
    return new BatchHandle(batchId, undefined, new ResultsFolder(resolve(opts.resultsDir ?? `results/${batchId}`)), client, owned);
  }

  get uiLink(): string { return batchUiLink(this.batchId); }

  /** The results folder as a Harbor job directory (config.json written on first use), kept up as rows close. */
  job(): Promise<JobRecorder> {
    this.recorder ??= JobRecorder.open(this.client, this.batchId, this.results.dir, this.input);
    return this.recorder;
  }

  async progress(): Promise<BatchProgress> {
    return this.client.workflow.getHandle(batchWorkflowId(this.batchId)).query<BatchProgress>('progress');
  }

  /** No new episode starts until resume(); running ones go on. Answers with the batch's progress after the change. */
  pause(): Promise<BatchProgress> { return steerBatch(this.client, this.batchId, BATCH_UPDATES.pause); }

  resume(): Promise<BatchProgress> { return steerBatch(this.client, this.batchId, BATCH_UPDATES.resume); }

  /** A new concurrency window: a larger one starts episodes at once, a smaller one lets running episodes finish. */
  resize(concurrency: number): Promise<BatchProgress> { return steerBatch(this.client, this.batchId, BATCH_UPDATES.resize, [concurrency]); }

  /**
   * Every episode's row as it closes (appended to rollouts.jsonl as it arrives). Episodes start in order, so a few
   * waiters beyond the batch's window walk the list: waiting on all of them at once would poll the server for
   * hundreds of episodes that have not started yet.
   */
  async rows(onRow?: (row: ResultRow) => void): Promise<{ rows: ResultRow[]; failed: number }> {
    if (!this.input) return collectRows(this.client, this.batchId, this.results, onRow, {}, [], await this.job());
    const episodes = episodesOf(this.input);
    const rows: ResultRow[] = [];
    let failed = 0;
    let next = 0;
    const batch = this.client.workflow.getHandle(batchWorkflowId(this.batchId));
    const batchRunning = async () => (await batch.describe()).status.name === 'RUNNING';
    const waiters = Math.min(episodes.length, Math.max(1, this.input.concurrency) + EXTRA_WAITERS);
    await Promise.all(Array.from({ length: waiters }, async () => {
      while (next < episodes.length) {
        const ep = episodes[next++]!;
        const row = await waitForEpisode(this.client, episodeWorkflowId(ep.batchId, ep.taskId, ep.repeat, ep.attempt), batchRunning);
        if (row === NEVER_STARTED) continue;
        if (!row) { failed++; continue; }
        rows.push(row);
        this.results.append(row);
        await (await this.job()).record(row);
        onRow?.(row);
      }
    }));
    return { rows, failed };
  }

  /** Waits for the batch, then writes rollouts.jsonl (newest attempts), metrics.json and skipped.json. */
  async wait(onRow?: (row: ResultRow) => void): Promise<BatchSummary> {
    const { rows } = await this.rows(onRow);
    await this.client.workflow.getHandle(batchWorkflowId(this.batchId)).result();
    return this.collect(undefined, rows);
  }

  /**
   * Rows of the newest attempt of every episode, from Temporal, rewritten into the results folder. Rows the caller
   * already has (by workflow id) are not fetched again.
   */
  async collect(onRow?: (row: ResultRow) => void, known: ResultRow[] = []): Promise<BatchSummary> {
    const labels = this.input ? { dataset: this.input.datasetName, agent: this.input.agent } : {};
    const { rows, metrics } = await collectRows(this.client, this.batchId, this.results, onRow, labels, known, await this.job());
    return { batchId: this.batchId, rows, metrics, resultsDir: this.results.dir, uiLink: this.uiLink };
  }

  /** Starts new attempts of the chosen episodes, waits for them, and rewrites the results folder. */
  async retry(selection: RetrySelection, onRow?: (row: ResultRow) => void): Promise<BatchSummary & { retried: string[]; kept: Array<{ workflowId: string; failureKind: string }> }> {
    const { started, kept } = await retryEpisodes(this.client, this.batchId, selection);
    await Promise.all(started.map(async (s) => {
      const row = await waitForEpisode(this.client, s.workflowId);
      if (row) onRow?.(row);
    }));
    return {
      ...(await this.collect()), retried: started.map((s) => s.workflowId),
      kept: kept.map((k) => ({ workflowId: k.from.workflowId, failureKind: k.failureKind })),
    };
  }

  /**
   * Regrades the newest attempt of the chosen finished episodes (all by default): verification again with the task's
   * tests/ as they are now, no agent. Waits for them and rewrites the results folder; a regrade that could not run is
   * listed in `failed` and leaves its episode's row reported.
   */
  async regrade(selection: RegradeSelection = {}, onRow?: (row: ResultRow) => void): Promise<BatchSummary & RegradesStarted & { failed: Array<{ workflowId: string; reason: string }> }> {
    const r = await regradeEpisodes(this.client, this.batchId, selection);
    const failed: Array<{ workflowId: string; reason: string }> = [];
    // None started: the results folder stays as it is (and is not made for a batch never collected).
    if (r.started.length === 0) {
      const rows = this.results.readRows();
      return { batchId: this.batchId, rows, metrics: metricsOf(rows), resultsDir: this.results.dir, uiLink: this.uiLink, ...r, failed };
    }
    await Promise.all(r.started.map(async (s) => {
      const row = await regradeResult(this.client, s.workflowId);
      if ('failed' in row) failed.push({ workflowId: s.workflowId, reason: row.failed });
      else onRow?.(row);
    }));
    return { ...(await this.collect()), ...r, failed };
  }

  /** Cancels the batch and every episode still running; cancelled episodes still tear down their sandboxes. */
  async cancel(): Promise<string[]> {
    const cancelled: string[] = [];
    await this.client.workflow.getHandle(batchWorkflowId(this.batchId)).cancel().catch(() => undefined);
    for (const e of await listEpisodes(this.client, this.batchId)) {
      if (e.status !== 'RUNNING') continue;
      await this.client.workflow.getHandle(e.workflowId).cancel();
      cancelled.push(e.workflowId);
    }
    return cancelled;
  }

  /** Cancels only the named running episodes (their sandboxes are removed; outcome failed; retryable). */
  cancelEpisodes(sel: EpisodeSelection): Promise<CancelledEpisodes> {
    return cancelEpisodes(this.client, this.batchId, sel);
  }

  /** Closes the connection this handle opened (none when the caller passed a client). */
  async close(): Promise<void> {
    await this.owned?.connection.close();
  }
}

/** Refuses an agent Berth does not have, listing the ones it has: before anything is loaded, built or started. */
export function checkAgentName(agent: string): asserts agent is AgentName {
  if ((AGENT_NAMES as readonly string[]).includes(agent)) return;
  throw new Error(`Unknown agent "${agent}". Choose one of ${AGENT_NAMES.join(', ')}.`);
}

/** Why a dataset has nothing to run: each refused task with its reason, or that no task folder was found. */
export function nothingLoaded(dataset: string, refused: ReadonlyArray<{ task_id: string; reason: string }>): string {
  if (refused.length === 0) return `No task folder found in ${dataset}: a task folder holds task.toml (searched up to six levels down).`;
  return `No task of ${dataset} can run.\n${refused.map((r) => `  ${r.task_id}: ${r.reason}`).join('\n')}`;
}

export async function startBatch(opts: StartBatchOptions): Promise<BatchHandle> {
  const agent: string = opts.agent ?? 'oracle';
  checkAgentName(agent);
  const untrainable = opts.training ? trainingRefusal(agent) : null;
  if (untrainable) throw new Error(`berth: training mode refused: ${untrainable}`);
  const loadedConfig = opts.configFile === undefined ? loadBerthConfig() : loadBerthConfig(opts.configFile);
  const { config } = loadedConfig;
  const loader = loaderOptions(loadedConfig);
  const imageAliases = { ...config.images.aliases, ...(opts.imageAliases ?? {}) };
  const resourceOverride = Object.keys(config.resources).length > 0 ? { ...config.resources } : undefined;
  const dataset = await withValidFields(await loadDataset(resolve(opts.dataset), {
    agent, allowUnsupportedPairing: opts.allowUnsupportedPairing, imageAliases, strict: opts.strict,
    only: opts.taskFilter, logger: opts.logger, resourceOverride, ...loader,
  }));
  if (dataset.tasks.length === 0) throw new Error(nothingLoaded(opts.dataset, dataset.refused.map(toSkippedEntry)));
  const owned = opts.client ? undefined : await connect();
  const client = opts.client ?? owned!.client;
  try {
    // In training mode the model is the trainer's policy, checked by its own probe (probePolicyEndpoint), not a vendor's.
    if (!opts.training) await probeBeforeBatch(client, { agent, model: opts.model, agentArgs: opts.agentArgs }, opts.taskQueue);
  } catch (err) {
    await owned?.connection.close();
    throw err;
  }
  const batchId = opts.batchId ?? newBatchId(opts.dataset);
  const input: BatchInput = {
    batchId,
    datasetName: basename(dataset.root),
    datasetPath: dataset.root,
    tasks: dataset.tasks.map((t) => ({ taskId: t.id, taskPath: t.path, digest: t.digest })),
    repeats: opts.repeats ?? dataset.settings.defaults.num_repeats ?? 1,
    concurrency: opts.concurrency ?? 4,
    agent,
    agentArgs: opts.agentArgs ?? {},
    imageAliases,
    episodeSettings: {
      defaultTimeoutSec: config.episode.default_timeout_seconds,
      enforceTaskTimeouts: config.episode.enforce_task_timeouts,
      sandboxReadyTimeoutSec: config.episode.sandbox_ready_timeout_s,
      ...(resourceOverride ? { resourceOverride } : {}),
      ...(loader.separateVerifierForArtifacts ? { separateVerifierForArtifacts: true } : {}),
      ...(opts.warmPool === false ? { warmPool: false as const } : {}),
      ...(config.results.store ? { resultsStore: config.results.store } : {}),
    },
    ...(opts.keepFinalState ? { keepFinalState: true } : {}),
    ...(opts.model !== undefined ? { model: opts.model } : {}),
    ...(opts.limits && Object.keys(opts.limits).length > 0 ? { limits: opts.limits } : {}),
    ...(opts.training ? { training: opts.training } : {}),
  };
  const skipped = dataset.refused.map(toSkippedEntry);
  if (opts.prepare !== false) {
    const toPrepare = { root: dataset.root, imageAliases, separateVerifierForArtifacts: loader.separateVerifierForArtifacts === true };
    const prepared = await prepareTasks(client, { ...prepareInput(toPrepare, input.tasks, agent), ...aheadOf(input) }, opts.taskQueue);
    skipped.push(...prepared.skipped);
    const failed = new Set(prepared.skipped.map((s) => s.task_id));
    const pins = new Map(prepared.outcomes.flatMap((o) => (o.ok && o.baseImageId ? [[o.taskId, o.baseImageId] as const] : [])));
    input.tasks = input.tasks.filter((t) => !failed.has(t.taskId)).map((t) => (pins.has(t.taskId) ? { ...t, baseImageId: pins.get(t.taskId)! } : t));
    if (input.tasks.length === 0) {
      await owned?.connection.close();
      throw new Error(`No task of ${opts.dataset} has an image ready:\n${prepared.skipped.map((s) => `  ${s.task_id}: ${s.reason}`).join('\n')}`);
    }
  }
  const results = new ResultsFolder(resolve(opts.resultsDir ?? join(opts.jobsDir ?? 'results', batchId)));
  results.writeSkipped(skipped);
  await client.workflow.start('batchWorkflow', {
    taskQueue: opts.taskQueue ?? sharedQueue(),
    workflowId: batchWorkflowId(batchId),
    args: [input],
    staticSummary: `batch ${batchId} · ${input.tasks.length} tasks × ${input.repeats} · ${input.agent}`,
    typedSearchAttributes: [
      { key: BERTH_BATCH, value: batchId },
      { key: BERTH_DATASET, value: input.datasetName },
      { key: BERTH_AGENT, value: input.agent },
    ],
  });
  const handle = new BatchHandle(batchId, input, results, client, owned, skipped);
  // The job's config and skipped tasks are in the store before the batch's first write of its job files reads them.
  await (await handle.job()).flushed();
  return handle;
}
