// The results store step of an episode (docs/deployment.md, A results store): once its turns are done, the host that
// ran it uploads its files. An upload that fails for good does not change the score: it is named on the row
// (`store_error`), and the files stay on the host, where `berth results` can still fetch them through its worker.
import { ActivityFailure, isCancellation, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { HostActivities } from '../activities/host-activities.ts';
import { batchWorkflowId } from '../config/batch-ids.ts';
import type { AfterLastVerify, EpisodeInput, EpisodePlan, HostLease, ResultRow } from './types.ts';

/** Recorded by episodes whose batch names a store: the upload activity before the row closes. */
export const RESULTS_STORE = 'results-store';
/**
 * Replaces results-store in newer runs: the episode tells its batch it is done (by signal, so the batch's window moves
 * on) as the upload starts, and closes with the row once the upload ends, as it does with its teardown.
 */
export const STORE_BESIDE_CLOSING = 'store-beside-closing';

/**
 * Replaces store-beside-closing in newer runs: the last verification, once it has torn down, tells the batch its slot
 * is free (slotFreedSignal) and uploads a small attempt itself, saving an activity, a signal and two workflow tasks per
 * episode; the episode's own upload activity runs only for what that did not store.
 */
export const STORE_IN_LAST_VERIFY = 'store-in-last-verify';

/**
 * What the last verification is to do after its teardown, decided once the host is known: only with a store, and
 * only where that host's worker keeps the files (not through a cluster's files queue). Records store-in-last-verify.
 */
export function afterLastVerifyOf(input: EpisodeInput, lease: HostLease, lastTearsDown: boolean): { afterLast?: AfterLastVerify } {
  const store = input.episodeSettings.resultsStore;
  if (!store || !lastTearsDown || lease.filesQueue || !patched(STORE_IN_LAST_VERIFY)) return {};
  const { workflowId, runId, parent } = workflowInfo();
  const toBatch = parent?.workflowId === batchWorkflowId(input.batchId) ? { slotFreedTo: parent.workflowId } : {};
  return { afterLast: { ...toBatch, store: { store, batchId: input.batchId, workflowId, runId } } };
}

/** Upload retries: a store that is down for a few minutes is waited out (2 s, 4 s, … about 4 min in all). */
const STORE_RETRY = { maximumAttempts: 8, initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '2 minutes', nonRetryableErrorTypes: ['berth:store_no_files', 'berth:store_refused'] };

/** Runs before the row closes, in runs that recorded results-store (before store-beside-closing). */
export async function storeEpisodeFilesOf(input: EpisodeInput, plan: EpisodePlan, lease: HostLease, row: ResultRow): Promise<void> {
  if (!input.episodeSettings.resultsStore || !patched(RESULTS_STORE)) return;
  await storeEpisodeFiles(input, plan, lease, row);
}

/** Uploads the attempt's files on the host that ran it; sets the row's store_key, or its store_error. */
export async function storeEpisodeFiles(input: EpisodeInput, plan: EpisodePlan, lease: HostLease, row: ResultRow): Promise<void> {
  const store = input.episodeSettings.resultsStore;
  if (!store) return;
  const { workflowId, runId } = workflowInfo();
  const { storeEpisodeFiles: upload } = proxyActivities<HostActivities>({
    // The worker that keeps the episode's files: on a shared cluster queue, its own files queue.
    taskQueue: lease.filesQueue ?? lease.queue,
    scheduleToStartTimeout: `${plan.scheduleToStartSec} seconds`,
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: `${Math.max(30, plan.heartbeatTimeoutSec)} seconds`,
    retry: STORE_RETRY,
  });
  try {
    const stored = await upload.executeWithOptions({ summary: `store files in ${store}` },
      [{ store, batchId: input.batchId, workflowId, runId }]);
    row.store_key = stored.key;
  } catch (err) {
    if (isCancellation(err)) throw err;
    const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
    row.store_error = `the files were not stored in ${store} (they stay on ${lease.host}): ${cause}`;
  }
}
