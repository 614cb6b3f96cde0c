import type { Client } from '@temporalio/client';
import type { ResultRow } from '../workflows/types.ts';
import { listEpisodes, newestEpisodes, waitForEpisode, type EpisodeRef } from './episodes.ts';
import type { BatchLabels, ResultsFolder, Metrics } from './results.ts';

export interface Collected { rows: ResultRow[]; failed: number; metrics: Metrics }

/** Rows of the newest attempt of every episode of a batch, written to the results folder. */
export async function collectRows(
  client: Client, batchId: string, results: ResultsFolder, onRow?: (row: ResultRow) => void, labels: BatchLabels = {}, known: ResultRow[] = [],
): Promise<Collected> {
  const all = await listEpisodes(client, batchId);
  const have = new Map(known.map((r) => [r.workflow_id, r]));
  const rows: ResultRow[] = [];
  let failed = 0;
  // A regrade that failed leaves the attempt before it reported; the listing may not say it closed yet, so its
  // result is what tells.
  const rowOf = async (e: EpisodeRef): Promise<ResultRow | undefined> => {
    const row = have.get(e.workflowId) ?? await waitForEpisode(client, e.workflowId);
    if (row || !e.regrade) return row;
    const before = newestEpisodes(all.filter((x) => x.taskId !== e.taskId || x.repeat !== e.repeat || x.attempt < e.attempt))
      .find((x) => x.taskId === e.taskId && x.repeat === e.repeat);
    return before ? rowOf(before) : undefined;
  };
  await Promise.all(newestEpisodes(all).map(async (e) => {
    const row = await rowOf(e);
    if (!row) failed++;
    else {
      rows.push(row);
      onRow?.(row);
    }
  }));
  const metrics = results.finish(rows, failed, { batch_id: batchId, ...labels });
  return { rows: results.readRows(), failed, metrics };
}
