import type { Client } from '@temporalio/client';
import { episodeStartOptions } from '../workflows/start-options.ts';
import type { ResultRow } from '../workflows/types.ts';
import { episodeInput, listEpisodes, newestEpisodes, nextAttempt, waitForEpisode, type EpisodeRef } from './episodes.ts';

export interface RetrySelection {
  /** Episodes whose newest attempt was masked. */
  masked?: boolean;
  /** Episodes whose newest attempt failed, was cancelled or terminated. */
  failed?: boolean;
  /** Episodes of these task ids, whatever their outcome. */
  taskIds?: string[];
  /** With taskIds: only this repeat of them. */
  repeat?: number;
}

export interface RetryStarted { from: EpisodeRef; workflowId: string }

const FAILED_STATUSES = new Set(['FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT']);

/** Whether an episode is one of the named (task, repeat) pairs: `--task ID [--repeat N]`. */
export const named = (e: Pick<EpisodeRef, 'taskId' | 'repeat'>, sel: Pick<RetrySelection, 'taskIds' | 'repeat'>): boolean =>
  sel.taskIds?.includes(e.taskId) === true && (sel.repeat === undefined || sel.repeat === e.repeat);

async function selected(client: Client, e: EpisodeRef, sel: RetrySelection): Promise<boolean> {
  if (named(e, sel)) return true;
  if (sel.failed && FAILED_STATUSES.has(e.status)) return true;
  if (sel.masked && e.status === 'COMPLETED') {
    const row = (await waitForEpisode(client, e.workflowId)) as ResultRow | undefined;
    return row?.mask_sample === true;
  }
  return false;
}

/** Starts attempt k+1 of each chosen episode (same input, id `…/<repeat>~a<k+1>`); finished work is not redone. */
export async function retryEpisodes(client: Client, batchId: string, sel: RetrySelection): Promise<RetryStarted[]> {
  const all = await listEpisodes(client, batchId);
  const started: RetryStarted[] = [];
  for (const e of newestEpisodes(all)) {
    if (e.status === 'RUNNING' || !(await selected(client, e, sel))) continue;
    const input = { ...(await episodeInput(client, e.workflowId)), attempt: nextAttempt(all, e) };
    const opts = episodeStartOptions(input);
    await client.workflow.start('episodeWorkflow', { ...opts, taskQueue: e.taskQueue });
    started.push({ from: e, workflowId: opts.workflowId });
  }
  return started;
}
