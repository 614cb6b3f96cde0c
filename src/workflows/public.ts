// The workflows' rules the client uses too, defined once here: which episodes a batch starts, their workflow ids and
// start options (a retry and a regrade start episodes the same way), the batch's live-control updates and its one
// concurrency rule, how usage adds up, and the upcoming episodes a batch tells the warm pools (the client tells the
// host that prepares its tasks before it starts). Pure and free of Temporal's workflow API: the client imports this module
// (docs/design.md section 2 gives the client workflow types only; eslint.config.js names this module as the exception).
import { BERTH_AGENT, BERTH_BATCH, BERTH_DATASET, BERTH_OUTCOME, BERTH_TASK } from '../config/search-attributes.ts';
import type { BatchInput, EpisodeInput, TokenUsage } from './types.ts';

export { upcomingOf } from './upcoming.ts';

export const episodeWorkflowId = (batchId: string, taskId: string, repeat: number, attempt = 1): string =>
  `berth/${batchId}/${taskId}/${repeat}${attempt > 1 ? `~a${attempt}` : ''}`;

/** Every (task, repeat) of a batch, in order: tasks times repeats. */
export function episodesOf(batch: BatchInput): EpisodeInput[] {
  return batch.tasks.flatMap((t) =>
    Array.from({ length: batch.repeats }, (_, i) => ({
      batchId: batch.batchId,
      datasetName: batch.datasetName,
      datasetPath: batch.datasetPath,
      taskId: t.taskId,
      taskPath: t.taskPath,
      digest: t.digest,
      ...(t.baseImageId !== undefined ? { baseImageId: t.baseImageId } : {}),
      repeat: i + 1,
      attempt: 1,
      agent: batch.agent,
      agentArgs: batch.agentArgs,
      imageAliases: batch.imageAliases,
      episodeSettings: batch.episodeSettings,
      ...(batch.keepFinalState ? { keepFinalState: true } : {}),
      ...(batch.model !== undefined ? { model: batch.model } : {}),
      ...(batch.limits !== undefined ? { limits: batch.limits } : {}),
      ...(batch.training !== undefined ? { training: batch.training } : {}),
    })),
  );
}

/** How an episode starts, whether a batch starts it or a retry does: id, one-line summary, search attributes. */
export function episodeStartOptions(ep: EpisodeInput) {
  return {
    workflowId: episodeWorkflowId(ep.batchId, ep.taskId, ep.repeat, ep.attempt),
    args: [ep] as [EpisodeInput],
    staticSummary: `${ep.taskId} · repeat ${ep.repeat}${ep.attempt > 1 ? ` · attempt ${ep.attempt}` : ''} · ${ep.agent}`,
    typedSearchAttributes: [
      { key: BERTH_BATCH, value: ep.batchId },
      { key: BERTH_TASK, value: ep.taskId },
      { key: BERTH_DATASET, value: ep.datasetName },
      { key: BERTH_AGENT, value: ep.agent },
      { key: BERTH_OUTCOME, value: 'running' },
    ],
  };
}

/** Live control of a running batch (berth pause | resume | resize): the update names. */
export const BATCH_UPDATES = { pause: 'pause', resume: 'resume', resize: 'resize' } as const;

/** Why a concurrency window is refused, or null when it is a whole number ≥ 1. */
export function concurrencyProblem(value: unknown): string | null {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1) return null;
  return `the concurrency window must be a whole number ≥ 1, got ${JSON.stringify(value)}; e.g. berth resize BATCH 4`;
}

/** What the batch is told to do now; carried across continue-as-new. */
export interface BatchControl {
  paused: boolean;
  concurrency: number;
}

/** Usage added up (a row's turns, a batch's rows); cached tokens and cost appear when some turn reported them. */
export function sumUsage(list: readonly TokenUsage[]): TokenUsage | undefined {
  if (list.length === 0) return undefined;
  const total: TokenUsage = { promptTokens: 0, completionTokens: 0, calls: 0 };
  for (const u of list) {
    total.promptTokens += u.promptTokens;
    total.completionTokens += u.completionTokens;
    total.calls += u.calls;
    if (u.cachedTokens !== undefined) total.cachedTokens = (total.cachedTokens ?? 0) + u.cachedTokens;
    if (u.costUsd !== undefined) total.costUsd = Math.round(((total.costUsd ?? 0) + u.costUsd) * 1e8) / 1e8;
  }
  return total;
}
