// Whether a host still has a worker: Temporal's pollers of its sandbox queue (a killed worker drops out of the list a
// minute after its last poll).
import type { Client } from '@temporalio/client';
import { recentPollers } from '../config/pollers.ts';

/** Whether any worker polled this queue's activities within the last minute; true when Temporal cannot say. */
export async function queueIsPolled(client: Client, queue: string): Promise<boolean> {
  try {
    const res = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace, taskQueue: { name: queue, kind: 1 }, taskQueueType: 2,
    });
    return recentPollers(res.pollers).length > 0;
  } catch {
    return true;
  }
}
