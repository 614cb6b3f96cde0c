import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type Client } from '@temporalio/client';
import { episodeStartOptions } from '../workflows/public.ts';
import { sharedQueue } from '../config/index.ts';
import type { EpisodeInput, ResultRow } from '../workflows/types.ts';

/**
 * Runs one episode under a workflow id of the caller's (NeMo Gym's /run): the same id is the same durable episode, so
 * asking again after a restart waits for the episode already running or finished, never starts a second. Answers its
 * row, or undefined when the workflow failed without one.
 */
export async function runOneEpisode(client: Client, input: EpisodeInput, workflowId: string, taskQueue = sharedQueue()): Promise<ResultRow | undefined> {
  try {
    await client.workflow.start('episodeWorkflow', { ...episodeStartOptions(input), workflowId, taskQueue, workflowIdReusePolicy: 'REJECT_DUPLICATE' });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  try {
    return await client.workflow.getHandle(workflowId).result() as ResultRow;
  } catch (err) {
    if (err instanceof WorkflowFailedError) return undefined;
    throw err;
  }
}
