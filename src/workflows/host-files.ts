import { proxyActivities } from '@temporalio/workflow';
import type { HostActivities } from '../activities/host-activities.ts';
import type { HostArchiveChunk, HostArchiveRequest, HostFilesPut } from './types.ts';

/**
 * One chunk of a folder on a host, through that host's queue (docs/deployment.md, Moving files): the client cannot
 * call an activity itself, so this one-activity workflow carries the call. A host that is gone fails it in `waitSec`
 * (default a minute).
 */
export async function hostArchiveWorkflow(req: HostArchiveRequest & { queue: string; waitSec?: number }): Promise<HostArchiveChunk> {
  const { hostArchiveChunk } = proxyActivities<HostActivities>({
    taskQueue: req.queue, scheduleToStartTimeout: `${req.waitSec ?? 60} seconds`, startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 3 },
  });
  const { queue: _queue, waitSec: _waitSec, ...request } = req;
  return hostArchiveChunk.executeWithOptions({ summary: `${req.dir} from offset ${req.offset}` }, [request]);
}

/**
 * One chunk of an episode folder sent to the worker that keeps it (src/activities/files-home.ts), through that worker's
 * files queue. A keeper that is gone does not take it within 15 s, and the sender keeps its copy.
 */
export async function hostFilesPutWorkflow(req: HostFilesPut & { queue: string }): Promise<{ received: number; unpacked: boolean }> {
  const { hostFilesPut } = proxyActivities<HostActivities>({
    taskQueue: req.queue, scheduleToStartTimeout: '15 seconds', startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 3 },
  });
  const { queue: _queue, ...chunk } = req;
  return hostFilesPut.executeWithOptions({ summary: `${req.dir} at offset ${req.offset} of ${req.total}` }, [chunk]);
}
