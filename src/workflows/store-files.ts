// The results store step of an episode (docs/deployment.md, A results store): once its turns are done, the host that
// ran it uploads its files. An upload that fails for good does not change the score: it is named on the row
// (`store_error`), and the files stay on the host, where `berth results` can still fetch them through its worker.
import { ActivityFailure, isCancellation, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { HostActivities } from '../activities/host-activities.ts';
import type { EpisodeInput, EpisodePlan, HostLease, ResultRow } from './types.ts';

/** Recorded by episodes whose batch names a store: the upload activity before the row closes. */
export const RESULTS_STORE = 'results-store';

/** Upload retries: a store that is down for a few minutes is waited out (2 s, 4 s, … about 4 min in all). */
const STORE_RETRY = { maximumAttempts: 8, initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', nonRetryableErrorTypes: ['berth:store_no_files', 'berth:store_refused'] };

export async function storeEpisodeFilesOf(input: EpisodeInput, plan: EpisodePlan, lease: HostLease, row: ResultRow): Promise<void> {
  const store = input.episodeSettings.resultsStore;
  if (!store || !patched(RESULTS_STORE)) return;
  const { workflowId, runId } = workflowInfo();
  const { storeEpisodeFiles } = proxyActivities<HostActivities>({
    // The worker that keeps the episode's files: on a shared cluster queue, its own files queue.
    taskQueue: lease.filesQueue ?? lease.queue,
    scheduleToStartTimeout: `${plan.scheduleToStartSec} seconds`,
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: `${Math.max(30, plan.heartbeatTimeoutSec)} seconds`,
    retry: STORE_RETRY,
  });
  try {
    const stored = await storeEpisodeFiles.executeWithOptions({ summary: `store files in ${store}` },
      [{ store, batchId: input.batchId, workflowId, runId }]);
    row.store_key = stored.key;
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
    row.store_error = `the files were not stored in ${store} (they stay on ${lease.host}): ${cause}`;
  }
}
