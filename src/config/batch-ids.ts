// What the client and the worker's warm pool both know of a batch workflow (pure constants): its id from the batch
// id, and the name of the query that tells a host which episodes come next (src/workflows/batch.ts answers it).
export const batchWorkflowId = (batchId: string): string => `berth/${batchId}`;

export const UPCOMING_QUERY = 'upcoming';

/** Runs the query tells at most: a pool holds a few sandboxes, so the next few tasks are all it can use. */
export const UPCOMING_RUNS = 8;

/**
 * The signal an episode's last verification sends its batch once the outcome is recorded and the sandbox handed to
 * removal ({ workflowId }): the batch's window moves on while the episode's files go up; the episode is counted when
 * it closes.
 */
export const SLOT_FREED_SIGNAL = 'episodeSlotFreed';
