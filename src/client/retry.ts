import type { Client } from '@temporalio/client';
import { isFailureKind, isRetryable } from '../outcomes/index.ts';
import { episodeStartOptions } from '../workflows/public.ts';
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

/** A masked episode `--masked` leaves alone: its kind says another attempt would end the same way (the task's fault). */
export interface RetryKept { from: EpisodeRef; failureKind: string }

const FAILED_STATUSES = new Set(['FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT']);

/** Whether an episode is one of the named (task, repeat) pairs: `--task ID [--repeat N]`. */
export const named = (e: Pick<EpisodeRef, 'taskId' | 'repeat'>, sel: Pick<RetrySelection, 'taskIds' | 'repeat'>): boolean =>
  sel.taskIds?.includes(e.taskId) === true && (sel.repeat === undefined || sel.repeat === e.repeat);

async function selected(client: Client, e: EpisodeRef, sel: RetrySelection): Promise<'retry' | { kept: string } | null> {
  if (named(e, sel)) return 'retry';
  if (sel.failed && FAILED_STATUSES.has(e.status)) return 'retry';
  if (sel.masked && e.status === 'COMPLETED') {
    const row = (await waitForEpisode(client, e.workflowId)) as ResultRow | undefined;
    if (row?.mask_sample !== true) return null;
    const kind = row.failure_kind;
    return kind && isFailureKind(kind) && !isRetryable(kind) ? { kept: kind } : 'retry';
  }
  return null;
}

/**
 * Starts attempt k+1 of each chosen episode (same input, id `…/<repeat>~a<k+1>`); finished work is not redone. A masked
 * episode whose failure kind is not retryable is kept (a retry would fail the same way); naming it with `taskIds`
 * retries it all the same.
 */
export async function retryEpisodes(client: Client, batchId: string, sel: RetrySelection): Promise<{ started: RetryStarted[]; kept: RetryKept[] }> {
  const all = await listEpisodes(client, batchId);
  const started: RetryStarted[] = [];
  const kept: RetryKept[] = [];
  for (const e of newestEpisodes(all)) {
    if (e.status === 'RUNNING') continue;
    const choice = await selected(client, e, sel);
    if (choice === null) continue;
    if (choice !== 'retry') {
      kept.push({ from: e, failureKind: choice.kept });
      continue;
    }
    const input = { ...(await episodeInput(client, e.workflowId)), attempt: nextAttempt(all, e) };
    const opts = episodeStartOptions(input);
    await client.workflow.start('episodeWorkflow', { ...opts, taskQueue: e.taskQueue });
    started.push({ from: e, workflowId: opts.workflowId });
  }
  return { started, kept };
}
