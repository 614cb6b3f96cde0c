// `berth status` of a batch with a results store: the closed attempts whose files did not reach the store (each
// failed for good after its retries; its files stay on its host), from their rows.
import type { Client } from '@temporalio/client';
import type { BatchInput, ResultRow } from '../workflows/types.ts';
import { batchWorkflowId, startInput, type EpisodeRef } from './episodes.ts';

export interface StoreFailure { workflow_id: string; host: string | null; store_error: string }

/** The batch's store (s3://…), or null when it has none. */
export async function batchStoreOf(client: Client, batchId: string): Promise<string | null> {
  const input = await startInput<BatchInput>(client, batchWorkflowId(batchId)).catch(() => undefined);
  return input?.episodeSettings.resultsStore ?? null;
}

export async function storeFailures(client: Client, episodes: EpisodeRef[]): Promise<StoreFailure[]> {
  const rows = await Promise.all(episodes.filter((e) => e.status === 'COMPLETED').map((e) =>
    client.workflow.getHandle(e.workflowId).result().then((r) => r as ResultRow, () => undefined)));
  return rows.flatMap((r) => (r?.store_error ? [{ workflow_id: r.workflow_id, host: r.host, store_error: r.store_error }] : []));
}
