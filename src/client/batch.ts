import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { basename, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { batchUiLink } from '../server/config.ts';
import type { AgentName, BatchInput, BatchProgress, EpisodeInput, ResultRow } from '../workflows/types.ts';
import { SHARED_QUEUE, episodeWorkflowId } from '../workflows/types.ts';
import { episodesOf } from '../workflows/episodes.ts';
import { BERTH_AGENT, BERTH_BATCH, BERTH_DATASET } from '../workflows/search-attributes.ts';
import { connect, type Connected } from './connect.ts';
import { loadDataset, toSkippedEntry } from '../task/index.ts';
import { loadBerthConfig } from '../task/berth-config.ts';
import { ResultsFolder, type Metrics, type SkippedEntry } from './results.ts';

export interface StartBatchOptions {
  dataset: string;
  agent?: AgentName;
  agentArgs?: Record<string, string>;
  repeats?: number;
  concurrency?: number;
  resultsDir?: string;
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
}

export interface BatchSummary { batchId: string; rows: ResultRow[]; metrics: Metrics; resultsDir: string; uiLink: string }

export const newBatchId = (dataset: string): string => {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${basename(resolve(dataset)).replace(/[^A-Za-z0-9_.-]/g, '_')}-${stamp}-${randomBytes(2).toString('hex')}`;
};

export class BatchHandle {
  constructor(
    readonly batchId: string,
    readonly input: BatchInput,
    readonly results: ResultsFolder,
    readonly client: Client,
    private readonly owned?: Connected,
    readonly skipped: SkippedEntry[] = [],
  ) {}

  get uiLink(): string { return batchUiLink(this.batchId); }

  async progress(): Promise<BatchProgress> {
    return this.client.workflow.getHandle(batchWorkflowId(this.batchId)).query<BatchProgress>('progress');
  }

  /** Every episode's row once it closes, appended to rollouts.jsonl as it arrives. */
  async rows(onRow?: (row: ResultRow) => void): Promise<{ rows: ResultRow[]; failed: number }> {
    const episodes = episodesOf(this.input);
    const rows: ResultRow[] = [];
    let failed = 0;
    await Promise.all(episodes.map(async (ep) => {
      const id = episodeWorkflowId(ep.batchId, ep.taskId, ep.repeat, ep.attempt);
      const row = await waitForEpisode(this.client, id);
      if (!row) { failed++; return; }
      rows.push(row);
      this.results.append(row);
      onRow?.(row);
    }));
    return { rows, failed };
  }

  async wait(onRow?: (row: ResultRow) => void): Promise<BatchSummary> {
    const { rows, failed } = await this.rows(onRow);
    await this.client.workflow.getHandle(batchWorkflowId(this.batchId)).result();
    const metrics = this.results.finish(rows, failed);
    return { batchId: this.batchId, rows: this.results.readRows(), metrics, resultsDir: this.results.dir, uiLink: this.uiLink };
  }

  async cancel(): Promise<void> {
    await this.client.workflow.getHandle(batchWorkflowId(this.batchId)).cancel();
  }

  /** Closes the connection startBatch opened (none when the caller passed a client). */
  async close(): Promise<void> {
    await this.owned?.connection.close();
  }
}

export const batchWorkflowId = (batchId: string): string => `berth/${batchId}`;

/** The episode's row; undefined when the workflow failed or was cancelled (outcome `failed`). */
async function waitForEpisode(client: Client, workflowId: string): Promise<ResultRow | undefined> {
  for (;;) {
    try {
      return await client.workflow.getHandle<(i: EpisodeInput) => Promise<ResultRow>>(workflowId).result();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      return undefined;
    }
  }
}

export async function startBatch(opts: StartBatchOptions): Promise<BatchHandle> {
  const { config } = loadBerthConfig();
  const imageAliases = { ...config.images.aliases, ...(opts.imageAliases ?? {}) };
  const agent = opts.agent ?? 'oracle';
  const dataset = await loadDataset(resolve(opts.dataset), {
    agent, allowUnsupportedPairing: opts.allowUnsupportedPairing, imageAliases, strict: opts.strict,
    only: opts.taskFilter, logger: opts.logger,
  });
  if (dataset.tasks.length === 0) {
    const why = dataset.refused.map((r) => `  ${r.task_id}: ${r.message}`).join('\n');
    throw new Error(`No task of ${opts.dataset} can run.${why ? `\n${why}` : ''}`);
  }
  const owned = opts.client ? undefined : await connect();
  const client = opts.client ?? owned!.client;
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
    },
  };
  const results = new ResultsFolder(resolve(opts.resultsDir ?? `results/${batchId}`));
  results.writeSkipped(dataset.refused.map(toSkippedEntry));
  await client.workflow.start('batchWorkflow', {
    taskQueue: opts.taskQueue ?? SHARED_QUEUE,
    workflowId: batchWorkflowId(batchId),
    args: [input],
    staticSummary: `batch ${batchId} · ${input.tasks.length} tasks × ${input.repeats} · ${input.agent}`,
    typedSearchAttributes: [
      { key: BERTH_BATCH, value: batchId },
      { key: BERTH_DATASET, value: input.datasetName },
      { key: BERTH_AGENT, value: input.agent },
    ],
  });
  return new BatchHandle(batchId, input, results, client, owned, dataset.refused.map(toSkippedEntry));
}
