import type { Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import type { BatchInput, PrepareInput, PrepareOutcome } from '../workflows/types.ts';
import { episodeWorkflowId, episodesOf, upcomingOf } from '../workflows/public.ts';
import { isInstalledAgentName } from '../config/agents.ts';
import type { DatasetToRun } from './datasets.ts';
import type { SkippedEntry } from './results.ts';
import { sharedQueue } from '../config/index.ts';

export interface PrepareResult {
  outcomes: PrepareOutcome[];
  /** Tasks whose image could not be made ready: skipped.json entries with stage `prepare`. */
  skipped: SkippedEntry[];
}

/** What prepare builds for a dataset's tasks: their images, an installed agent's layer over each, verifier images. */
export function prepareInput(dataset: Pick<DatasetToRun, 'root' | 'imageAliases' | 'separateVerifierForArtifacts'>, tasks: PrepareInput['tasks'], agent?: string): PrepareInput {
  return {
    datasetPath: dataset.root, tasks, imageAliases: dataset.imageAliases, ...(agent !== undefined && isInstalledAgentName(agent) ? { agent } : {}),
    ...(dataset.separateVerifierForArtifacts ? { separateVerifierForArtifacts: true } : {}),
  };
}

/** Episodes seeded for at most: more than any host's pool holds (warm-pool-plan.ts poolCapacity). */
const AHEAD_EPISODES = 8;

/**
 * The batch's first episodes, so the host that prepares its tasks seeds them in its warm pool while the batch starts
 * (docs/performance-notes.md, The warm pool); nothing when the batch turns the pool off.
 */
export function aheadOf(batch: BatchInput): Pick<PrepareInput, 'ahead'> {
  if (batch.episodeSettings.warmPool === false) return {};
  const episodes = episodesOf(batch);
  if (episodes.length === 0) return {};
  const { upcoming } = upcomingOf(episodes, 0, false);
  const first = episodes.slice(0, AHEAD_EPISODES).map((e) => ({ workflowId: episodeWorkflowId(e.batchId, e.taskId, e.repeat, e.attempt), taskId: e.taskId }));
  return { ahead: { first: episodes[0]!, upcoming, episodes: first } };
}

/** Builds or checks every task's image on a worker's host (docs/design.md section 7: run and validate prepare first). */
export async function prepareTasks(client: Client, input: PrepareInput, taskQueue = sharedQueue()): Promise<PrepareResult> {
  const outcomes = await client.workflow.execute('prepareWorkflow', {
    taskQueue, workflowId: `berth-prepare/${randomBytes(4).toString('hex')}`, args: [input],
    staticSummary: `prepare ${input.tasks.length} task image(s) of ${input.datasetPath}`,
  }) as PrepareOutcome[];
  const paths = new Map(input.tasks.map((t) => [t.taskId, t.taskPath]));
  const skipped = outcomes.flatMap((o): SkippedEntry[] => (o.ok ? [] : [{ task_id: o.taskId, path: paths.get(o.taskId) ?? '', reason: o.reason, stage: 'prepare' }]));
  return { outcomes, skipped };
}
