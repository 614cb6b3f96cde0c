import { WorkflowFailedError, type Client } from '@temporalio/client';
import { episodeStartOptions } from '../workflows/public.ts';
import type { EpisodeInput, RegradeInput, ResultRow } from '../workflows/types.ts';
import { hostQueueOf, listEpisodes, newestEpisodes, nextAttempt, startInput, waitForEpisode, type EpisodeRef } from './episodes.ts';
import { named } from './retry.ts';

export interface RegradeSelection { taskIds?: string[]; repeat?: number }

export interface RegradeStarted { from: string; workflowId: string }

export interface RegradesStarted {
  started: RegradeStarted[];
  /** Chosen episodes that cannot be regraded here and now, with why. */
  skipped: Array<{ workflowId: string; reason: string }>;
}

/** What a regrade of this row needs: the episode, where its logs and kept state are. */
export async function regradeInputFor(client: Client, e: EpisodeRef, row: ResultRow, attempt: number): Promise<RegradeInput | string> {
  if (!row.logs_dir) return 'its row names no logs folder (the agent never ran: the seed failed)';
  const input = await startInput<EpisodeInput | RegradeInput>(client, e.workflowId);
  const hostQueue = await hostQueueOf(client, e.workflowId, e.taskQueue);
  const regraded = 'episode' in input ? input : undefined;
  const queue = regraded?.from.queue ?? hostQueue;
  if (!queue) return 'its history names no host queue (the agent never ran)';
  return {
    episode: { ...(regraded?.episode ?? (input as EpisodeInput)), attempt },
    from: {
      workflowId: e.workflowId, runId: row.run_id, queue, host: row.host, logsDir: row.logs_dir, responseText: row.response_text,
      timings: row.timings, ...(row.usage ? { usage: row.usage } : {}),
    },
    stateOf: regraded?.stateOf ?? { workflowId: e.workflowId, runId: row.run_id },
  };
}

/**
 * Starts a regrade (a new attempt that verifies again without the agent) of the newest attempt of each chosen
 * episode that finished with a row: all of the batch's, or the named (task, repeat)s.
 */
export async function regradeEpisodes(client: Client, batchId: string, sel: RegradeSelection): Promise<RegradesStarted> {
  const all = await listEpisodes(client, batchId);
  const out: RegradesStarted = { started: [], skipped: [] };
  for (const e of newestEpisodes(all)) {
    if (sel.taskIds && !named(e, { taskIds: sel.taskIds, repeat: sel.repeat })) continue;
    if (e.status !== 'COMPLETED') {
      out.skipped.push({ workflowId: e.workflowId, reason: e.status === 'RUNNING' ? 'still running' : `its workflow is ${e.status.toLowerCase()}: no row to regrade (retry it instead)` });
      continue;
    }
    const row = await waitForEpisode(client, e.workflowId);
    const input = row ? await regradeInputFor(client, e, row, nextAttempt(all, e)) : 'no row';
    if (typeof input === 'string') { out.skipped.push({ workflowId: e.workflowId, reason: input }); continue; }
    const opts = episodeStartOptions(input.episode);
    await client.workflow.start('regradeWorkflow', {
      ...opts, args: [input], taskQueue: e.taskQueue,
      staticSummary: `regrade of ${e.workflowId} (verifier again, no agent) · attempt ${input.episode.attempt}`,
    });
    out.started.push({ from: e.workflowId, workflowId: opts.workflowId });
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
