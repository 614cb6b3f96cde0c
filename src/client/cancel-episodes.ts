import type { Client } from '@temporalio/client';
import { listEpisodes, newestEpisodes } from './episodes.ts';
import { named } from './retry.ts';

export interface EpisodeSelection { taskIds: string[]; repeat?: number }

export interface CancelledEpisodes {
  /** Workflow ids of the episodes cancelled: their sandboxes are removed, their outcome is `failed`. */
  cancelled: string[];
  /** Named episodes that had already closed (nothing to cancel), by workflow id. */
  closed: string[];
}

/**
 * Cancels the newest attempt of each named (task, repeat) that is running, and nothing else: the batch counts each
 * as failed (excluded from the score) and goes on; `retry` starts a new attempt. Episodes the batch has not started
 * yet have no workflow to cancel.
 */
export async function cancelEpisodes(client: Client, batchId: string, sel: EpisodeSelection): Promise<CancelledEpisodes> {
  const out: CancelledEpisodes = { cancelled: [], closed: [] };
  for (const e of newestEpisodes(await listEpisodes(client, batchId))) {
    if (!named(e, sel)) continue;
    if (e.status !== 'RUNNING') { out.closed.push(e.workflowId); continue; }
    await client.workflow.getHandle(e.workflowId).cancel();
    out.cancelled.push(e.workflowId);
  }
  return out;
}
