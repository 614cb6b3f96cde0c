import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { BATCH_UPDATES, concurrencyProblem } from '../workflows/public.ts';
import type { BatchProgress } from '../workflows/types.ts';
import { batchWorkflowId } from './episodes.ts';

/** An update waits for a worker to run the batch's workflow task; without one it would wait for ever. */
const STEER_TIMEOUT_MS = 60_000;

type Update = typeof BATCH_UPDATES[keyof typeof BATCH_UPDATES];

/** A refused or impossible change to a batch, said so that the user knows what to do instead. */
export class BatchControlError extends Error {}

/**
 * Sends one live-control update to the batch's current run and returns the progress it answers with. The batch
 * validates too (a script may pass anything); a batch that has closed cannot be steered.
 */
export async function steerBatch(client: Client, batchId: string, update: Update, args: number[] = [], timeoutMs = STEER_TIMEOUT_MS): Promise<BatchProgress> {
  if (update === BATCH_UPDATES.resize) {
    const problem = concurrencyProblem(args[0]);
    if (problem) throw new BatchControlError(problem);
  }
  const handle = client.workflow.getHandle(batchWorkflowId(batchId));
  try {
    return await client.withDeadline(Date.now() + timeoutMs, () => (args.length > 0
      ? handle.executeUpdate<BatchProgress, [number]>(update, { args: [args[0]!] })
      : handle.executeUpdate<BatchProgress, []>(update)));
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new BatchControlError(`batch ${batchId} refused ${update}: ${err.cause?.message ?? err.message}`);
    const status = await handle.describe().then((d) => d.status.name, (e: unknown) => (e instanceof WorkflowNotFoundError ? 'missing' : undefined));
    if (status === 'missing') throw new BatchControlError(`no batch ${batchId} on this Temporal server; list batches with: npx berth status`);
    if (status && status !== 'RUNNING') throw new BatchControlError(`batch ${batchId} is ${status.toLowerCase()}: there is nothing left to ${update}`);
    if (status === 'RUNNING') {
      throw new BatchControlError(`batch ${batchId} did not answer ${update} within ${timeoutMs / 1000} s: no worker may be polling its task queue (start one with: npx berth worker); then run the command again (it is idempotent)`);
    }
    throw err;
  }
}
