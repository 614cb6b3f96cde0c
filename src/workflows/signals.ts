import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { BATCH_UPDATES } from './public.ts';
import { SLOT_FREED_SIGNAL, UPCOMING_QUERY } from '../config/batch-ids.ts';
import type { BatchProgress, ResultRow, UpcomingEpisodes } from './types.ts';

export interface EpisodeDone {
  workflowId: string;
  outcome: 'scored' | 'masked' | 'failed';
  reward: number | null;
  /** What a rollout run needs of the row beside the outcome (small: token arrays stay in their file). */
  detail?: Pick<ResultRow, 'failure_kind' | 'failure_reason' | 'logs_dir' | 'training'>;
}

/** What a closed episode tells its batch (or rollout run): its row's outcome, or a failure when it has no row. */
export function doneOf(workflowId: string, row: ResultRow | undefined): EpisodeDone {
  if (!row) return { workflowId, outcome: 'failed', reward: null };
  const detail = { failure_kind: row.failure_kind, failure_reason: row.failure_reason, logs_dir: row.logs_dir, ...(row.training ? { training: row.training } : {}) };
  return { workflowId, outcome: row.mask_sample ? 'masked' : 'scored', reward: row.reward, detail };
}

/** An episode tells its batch it closed, by the batch's workflow id, so it reaches the batch's current run. */
export const episodeDoneSignal = defineSignal<[EpisodeDone]>('episodeDone');
/** An episode's last verification tells its batch the episode holds no more of its window (it is counted on closing). */
export const slotFreedSignal = defineSignal<[{ workflowId: string }]>(SLOT_FREED_SIGNAL);
/**
 * A batch about to continue as new tells its running children to report their closing by signal: its next run does
 * not see their completions (episode-v5 children are otherwise counted from their completion, and do not signal).
 */
export const reportBySignal = defineSignal('reportBySignal');
export const progressQuery = defineQuery<BatchProgress>('progress');
/** Which episodes the batch starts next, for the hosts' warm pools (a query: nothing in the batch's history). */
export const upcomingQuery = defineQuery<UpcomingEpisodes>(UPCOMING_QUERY);

/** Live control of a batch; each answers with the batch's progress after the change. */
export const pauseUpdate = defineUpdate<BatchProgress>(BATCH_UPDATES.pause);
export const resumeUpdate = defineUpdate<BatchProgress>(BATCH_UPDATES.resume);
export const resizeUpdate = defineUpdate<BatchProgress, [number]>(BATCH_UPDATES.resize);
