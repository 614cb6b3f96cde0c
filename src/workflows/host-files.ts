import { proxyActivities } from '@temporalio/workflow';
import type { HostActivities } from '../activities/host-activities.ts';
import type { HostArchiveChunk, HostArchiveRequest } from './types.ts';

/**
 * One chunk of a folder on a host, through that host's queue (docs/deployment.md, Moving files): the client cannot
 * call an activity itself, so this one-activity workflow carries the call. A host that is gone fails it in a minute.
 */
export async function hostArchiveWorkflow(req: HostArchiveRequest & { queue: string }): Promise<HostArchiveChunk> {
  const { hostArchiveChunk } = proxyActivities<HostActivities>({
    taskQueue: req.queue, scheduleToStartTimeout: '1 minute', startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 },
  });
  const { queue: _queue, ...request } = req;
  return hostArchiveChunk.executeWithOptions({ summary: `${req.dir} from offset ${req.offset}` }, [request]);
}
