import type { Client } from '@temporalio/client';
import type { ResultRow } from '../workflows/types.ts';
import { listEpisodes, newestEpisodes, waitForEpisode, type EpisodeRef } from './episodes.ts';
import type { BatchLabels, ResultsFolder, Metrics } from './results.ts';
import type { JobRecorder } from './harbor-job/recorder.ts';

export interface Collected { rows: ResultRow[]; failed: number; metrics: Metrics }

/**
 * Rows of the newest attempt of every episode of a batch, written to the results folder; with a recorder, every
 * closed attempt (earlier ones too) is also a trial of the batch's Harbor job directory.
 */
export async function collectRows(
  client: Client, batchId: string, results: ResultsFolder, onRow?: (row: ResultRow) => void, labels: BatchLabels = {}, known: ResultRow[] = [],
  recorder?: JobRecorder,
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
  const newest = newestEpisodes(all);
  await Promise.all(newest.map(async (e) => {
    const row = await rowOf(e);
    if (!row) failed++;
    else {
      rows.push(row);
      await recorder?.record(row);
      onRow?.(row);
    }
  }));
  if (recorder) {
    // Earlier attempts stay trials of the job (marked by their attempt), whether or not a client saw them close.
    const reported = new Set(rows.map((r) => r.workflow_id));
    for (const e of all) {
      if (reported.has(e.workflowId) || e.status !== 'COMPLETED') continue;
      const row = have.get(e.workflowId) ?? await waitForEpisode(client, e.workflowId);
      if (row) await recorder.record(row);
    }
  }
  const metrics = results.finish(rows, failed, { batch_id: batchId, ...labels });
  await recorder?.finish(failed);
  return { rows: results.readRows(), failed, metrics };
}
