import { patched, proxyActivities } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared-activities.ts';
import type { HostActivities } from '../activities/host-activities.ts';
import type { PrepareInput, PrepareOutcome } from './types.ts';

const { hostLease } = proxyActivities<SharedActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 3 } });

/** Per task, as the per-task activity had; a dead worker is noticed by the heartbeat. */
const PREPARE_HOURS_PER_TASK = 2;

/**
 * Builds or checks every task's image on one host, one at a time (builds are CPU-heavy), so a
 * batch's seeds find them ready. Other hosts build theirs at seed.
 */
export async function prepareWorkflow(input: PrepareInput): Promise<PrepareOutcome[]> {
  if (patched('prepare-in-one-activity')) {
    // One activity on whichever worker (a host) takes it, instead of a lease and one activity per task.
    const { prepareTasksHere } = proxyActivities<SharedActivities>({
      startToCloseTimeout: `${PREPARE_HOURS_PER_TASK * Math.max(1, input.tasks.length)} hours`, heartbeatTimeout: '60 seconds',
      retry: { maximumAttempts: 2 },
    });
    return prepareTasksHere.executeWithOptions({ summary: `prepare ${input.tasks.length} task(s)` }, [input]);
  }
  const lease = await hostLease();
  const { prepareTask } = proxyActivities<HostActivities>({
    taskQueue: lease.queue, scheduleToStartTimeout: '5 minutes', startToCloseTimeout: '2 hours', heartbeatTimeout: '60 seconds',
    retry: { maximumAttempts: 2 },
  });
  const outcomes: PrepareOutcome[] = [];
  for (const t of input.tasks) {
    outcomes.push(await prepareTask.executeWithOptions({ summary: `prepare ${t.taskId}` }, [{ ...t, datasetPath: input.datasetPath, imageAliases: input.imageAliases }]));
  }
  return outcomes;
}
