import { proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared-activities.ts';
import type { HostActivities } from '../activities/host-activities.ts';
import { FINAL_ERROR_TYPES, maskedTurn, maskingFailure } from './failures.ts';
import { rollUp } from './rollup.ts';
import { buildRow } from './row.ts';
import { BERTH_FAILURE_KIND, BERTH_OUTCOME, BERTH_REWARD } from '../config/search-attributes.ts';
import { REGRADE_REFUSED } from '../outcomes/index.ts';
import type { RegradeInput, ResultRow, TurnOutcome } from './types.ts';

const NOT_RETRIED = [...FINAL_ERROR_TYPES, REGRADE_REFUSED];

const { planRegrade } = proxyActivities<SharedActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: NOT_RETRIED },
});

/**
 * A new attempt of a finished episode that runs its verification again, never its agent: one activity on the host
 * that holds the episode's logs and kept state. Its row says `regraded_from`; a regrade that cannot run fails, so the
 * graded attempt stays the one reported.
 */
export async function regradeWorkflow(input: RegradeInput): Promise<ResultRow> {
  const info = workflowInfo();
  try {
    const plan = await planRegrade.executeWithOptions({ summary: `plan the regrade of ${input.episode.taskId}` }, [input]);
    const { regradeTurn } = proxyActivities<HostActivities>({
      taskQueue: input.from.queue,
      scheduleToStartTimeout: `${plan.scheduleToStartSec} seconds`,
      // It may wait for a sandbox slot first; the heartbeat says it is alive.
      startToCloseTimeout: '24 hours',
      heartbeatTimeout: `${plan.heartbeatTimeoutSec} seconds`,
      retry: { maximumAttempts: 3, initialInterval: '2 seconds', nonRetryableErrorTypes: NOT_RETRIED },
    });
    let turn: TurnOutcome;
    let logsDir: string | null = null;
    try {
      const done = await regradeTurn.executeWithOptions({ summary: `verify ${input.episode.taskId} again (no agent)` }, [{ input, plan }]);
      ({ logsDir, ...turn } = done);
    } catch (err) {
      const f = maskingFailure(err);
      turn = maskedTurn(plan.steps[0]?.name ?? input.episode.taskId, f.kind, f.reason);
    }
    const row = buildRow({
      input: input.episode, plan, turns: [turn], result: rollUp([turn], plan.strategy), stoppedAfter: null, sandbox: undefined,
      host: input.from.host, workflowId: info.workflowId, runId: info.runId,
    });
    row.logs_dir = logsDir;
    row.regraded_from = input.from.workflowId;
    upsertSearchAttributes([
      { key: BERTH_OUTCOME, value: row.mask_sample ? 'masked' : 'scored' },
      ...(row.reward !== null ? [{ key: BERTH_REWARD, value: row.reward }] : []),
      ...(row.failure_kind ? [{ key: BERTH_FAILURE_KIND, value: row.failure_kind }] : []),
    ]);
    return row;
  } catch (err) {
    upsertSearchAttributes([{ key: BERTH_OUTCOME, value: 'failed' }]);
    throw err;
  }
}

/**
 * Whether a regrade of this episode could run, asked before any regrade starts (so one that cannot takes no attempt
 * number): the plan, then the host's own check of its logs and kept state. Null when it can, else why not.
 */
export async function regradeCheckWorkflow(input: RegradeInput): Promise<string | null> {
  let plan;
  try {
    plan = await planRegrade.executeWithOptions({ summary: `plan the regrade of ${input.episode.taskId}` }, [input]);
  } catch (err) {
    return maskingFailure(err).reason;
  }
  const { regradeRefusal } = proxyActivities<HostActivities>({
    taskQueue: input.from.queue, scheduleToStartTimeout: '1 minute', startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 3 },
  });
  try {
    return await regradeRefusal.executeWithOptions({ summary: `can ${input.from.queue} regrade ${input.episode.taskId}?` }, [{ input, plan }]);
  } catch (err) {
    return `the host that ran it (queue ${input.from.queue}) did not answer: ${maskingFailure(err).reason}`;
  }
}
