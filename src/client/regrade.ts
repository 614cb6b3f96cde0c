import { WorkflowFailedError, type Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { episodeStartOptions } from '../workflows/public.ts';
import type { EpisodeInput, RegradeInput, ResultRow } from '../workflows/types.ts';
import { hostQueueOf, listEpisodes, newestEpisodes, nextAttempt, startInput, waitForEpisode, type EpisodeRef } from './episodes.ts';
import { named } from './retry.ts';
import { queueIsPolled } from './live-queue.ts';

export interface RegradeSelection { taskIds?: string[]; repeat?: number }

export interface RegradeStarted { from: string; workflowId: string }

export interface RegradesStarted {
  started: RegradeStarted[];
  /** Chosen episodes that cannot be regraded here and now, with why. */
  skipped: Array<{ workflowId: string; reason: string }>;
}

/**
 * What a regrade of this row needs: the episode, where its logs and kept state are. With a results store that holds
 * the attempt's files, the input names their key; and when no worker polls the host that ran it, the regrade may run
 * on any live host of the batch, which reads them from the store (`anyHost`).
 */
export async function regradeInputFor(client: Client, e: EpisodeRef, row: ResultRow, attempt: number): Promise<RegradeInput | string> {
  if (!row.logs_dir) return 'its row names no logs folder (the agent never ran: the seed failed)';
  const input = await startInput<EpisodeInput | RegradeInput>(client, e.workflowId);
  const hostQueue = await hostQueueOf(client, e.workflowId, e.taskQueue);
  const regraded = 'episode' in input ? input : undefined;
  // A regrade that ran on another host than the attempt it regraded has its logs where its verification ran.
  const queue = (regraded?.anyHost ? hostQueue : regraded?.from.queue) ?? hostQueue;
  if (!queue) return 'its history names no host queue (the agent never ran)';
  const episode = { ...(regraded?.episode ?? (input as EpisodeInput)), attempt };
  const storeKey = episode.episodeSettings.resultsStore && row.store_key ? row.store_key : undefined;
  return {
    episode,
    from: {
      workflowId: e.workflowId, runId: row.run_id, queue, host: row.host, logsDir: row.logs_dir, responseText: row.response_text,
      timings: row.timings, ...(row.usage ? { usage: row.usage } : {}), ...(storeKey ? { storeKey } : {}),
    },
    stateOf: regraded?.stateOf ?? { workflowId: e.workflowId, runId: row.run_id },
    ...(storeKey && !(await queueIsPolled(client, queue)) ? { anyHost: true as const } : {}),
  };
}

/**
 * Starts a regrade (a new attempt that verifies again without the agent) of the newest attempt of each chosen
 * episode that finished with a row: all of the batch's, or the named (task, repeat)s. An episode still closing (its
 * row final, its teardown going on) is waited for. Each one's host is asked first whether it can regrade it (logs,
 * kept state; with a results store, a host that is gone is stood in for by a live one reading the store): one that
 * cannot is skipped with why, and no regrade starts until every one was asked, so a regrade that cannot run never
 * takes an attempt number.
 */
export async function regradeEpisodes(client: Client, batchId: string, sel: RegradeSelection): Promise<RegradesStarted> {
  const all = await listEpisodes(client, batchId);
  const out: RegradesStarted = { started: [], skipped: [] };
  const chosen = newestEpisodes(all).filter((e) => !sel.taskIds || named(e, { taskIds: sel.taskIds, repeat: sel.repeat }));
  const checked = await Promise.all(chosen.map(async (e): Promise<RegradeInput | { workflowId: string; reason: string }> => {
    const skip = (reason: string) => ({ workflowId: e.workflowId, reason });
    if (e.status !== 'COMPLETED' && e.status !== 'RUNNING') return skip(`its workflow is ${e.status.toLowerCase()}: no row to regrade (retry it instead)`);
    const row = await waitForEpisode(client, e.workflowId);
    if (!row) return skip('its workflow failed or was cancelled: no row to regrade (retry it instead)');
    const input = await regradeInputFor(client, e, row, nextAttempt(all, e));
    if (typeof input === 'string') return skip(input);
    const refusal = await client.workflow.execute('regradeCheckWorkflow', {
      taskQueue: e.taskQueue, workflowId: `berth-regrade-check/${randomBytes(6).toString('hex')}`, args: [input],
      staticSummary: `can ${e.workflowId} be regraded?`,
    }) as string | null;
    return refusal ? skip(refusal) : input;
  }));
  for (const c of checked) {
    if ('reason' in c) { out.skipped.push(c); continue; }
    const opts = episodeStartOptions(c.episode);
    await client.workflow.start('regradeWorkflow', {
      ...opts, args: [c], taskQueue: all.find((e) => e.workflowId === c.from.workflowId)!.taskQueue,
      staticSummary: `regrade of ${c.from.workflowId} (verifier again, no agent) · attempt ${c.episode.attempt}`,
    });
    out.started.push({ from: c.from.workflowId, workflowId: opts.workflowId });
  }
  return out;
}

/** A regrade's row, or why it could not run. */
export async function regradeResult(client: Client, workflowId: string): Promise<ResultRow | { failed: string }> {
  try {
    return await client.workflow.getHandle<(i: RegradeInput) => Promise<ResultRow>>(workflowId).result();
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    // The workflow failed because its activity did: the reason is the innermost cause.
    let cause: Error = err;
    while (cause.cause instanceof Error) cause = cause.cause;
    return { failed: cause.message };
  }
}
