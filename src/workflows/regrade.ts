import { patched, proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SharedActivities } from '../activities/shared-activities.ts';
import type { HostActivities } from '../activities/host-activities.ts';
import { FINAL_ERROR_TYPES, maskedTurn, maskingFailure } from './failures.ts';
import { rollUp } from './rollup.ts';
import { buildRow } from './row.ts';
import { storeEpisodeFilesOf } from './store-files.ts';
import { BERTH_FAILURE_KIND, BERTH_OUTCOME, BERTH_REWARD } from '../config/search-attributes.ts';
import { REGRADE_REFUSED } from '../outcomes/index.ts';
import type { RegradeInput, ResultRow, TurnOutcome } from './types.ts';

const NOT_RETRIED = [...FINAL_ERROR_TYPES, REGRADE_REFUSED];

const { planRegrade } = proxyActivities<SharedActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: NOT_RETRIED },
});

const { hostLease } = proxyActivities<SharedActivities>({ startToCloseTimeout: '1 minute', retry: { maximumAttempts: 3 } });

/** Runs that may regrade on another host than the one that ran the attempt, from the results store (issue 39). */
export const REGRADE_FROM_STORE = 'regrade-from-store';

/** Regrades of a batch with a results store upload their own files there, as episodes do (issue 39). */
export const REGRADE_STORES_FILES = 'regrade-stores-files';

/**
 * The host the regrade runs on: the one that ran the attempt (its logs and kept state are there), or, when the client
 * found no worker of it and the attempt's files are in the store, the host of whichever live worker of the batch's
 * shared queue answers. Only runs with `anyHost` call patched(), so the histories before it replay unchanged.
 */
async function regradeHost(input: RegradeInput): Promise<{ queue: string; host: string | null }> {
  if (input.anyHost && patched(REGRADE_FROM_STORE)) {
    const lease = await hostLease.executeWithOptions({ summary: `a live host to regrade ${input.from.workflowId} from the results store` }, []);
    return { queue: lease.queue, host: lease.host };
  }
  return { queue: input.from.queue, host: input.from.host };
}

/**
 * A new attempt of a finished episode that runs its verification again, never its agent: one activity on the host
 * that holds the episode's logs and kept state (or, that host gone, on a live one that reads the logs from the
 * store). Its row says `regraded_from`; a regrade that cannot run fails, so the graded attempt stays the one reported.
 * With a results store, the regrade's own files are uploaded there as an episode's are.
 */
export async function regradeWorkflow(input: RegradeInput): Promise<ResultRow> {
  const info = workflowInfo();
  try {
    const plan = await planRegrade.executeWithOptions({ summary: `plan the regrade of ${input.episode.taskId}` }, [input]);
    const where = await regradeHost(input);
    const { regradeTurn } = proxyActivities<HostActivities>({
      taskQueue: where.queue,
      scheduleToStartTimeout: `${plan.scheduleToStartSec} seconds`,
      // It may wait for a sandbox slot first; the heartbeat says it is alive.
      startToCloseTimeout: '24 hours',
      heartbeatTimeout: `${plan.heartbeatTimeoutSec} seconds`,
      retry: { maximumAttempts: 3, initialInterval: '2 seconds', nonRetryableErrorTypes: NOT_RETRIED },
    });
    let turn: TurnOutcome;
    let logsDir: string | null = null;
    let filesQueue: string | undefined;
    try {
      const done = await regradeTurn.executeWithOptions({ summary: `verify ${input.episode.taskId} again (no agent)` }, [{ input, plan }]);
      ({ logsDir, filesQueue, ...turn } = done);
    } catch (err) {
      const f = maskingFailure(err);
      turn = maskedTurn(plan.steps[0]?.name ?? input.episode.taskId, f.kind, f.reason);
    }
    const row = buildRow({
      input: input.episode, plan, turns: [turn], result: rollUp([turn], plan.strategy), stoppedAfter: null, sandbox: undefined,
      host: where.host, workflowId: info.workflowId, runId: info.runId,
    });
    row.logs_dir = logsDir;
    row.regraded_from = input.from.workflowId;
    // Only with a store and a logs folder: histories of regrades before it replay without the extra step.
    if (input.episode.episodeSettings.resultsStore && logsDir && patched(REGRADE_STORES_FILES)) {
      // On a cluster's shared sandbox queue, the worker that ran the verification keeps the files: its own queue.
      await storeEpisodeFilesOf(input.episode, plan, { host: where.host ?? where.queue, queue: where.queue, ...(filesQueue ? { filesQueue } : {}) }, row);
    }
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
  let where;
  try {
    where = await regradeHost(input);
  } catch (err) {
    return `the host that ran it (queue ${input.from.queue}) has no worker, and no worker of the batch answered: ${maskingFailure(err).reason}`;
  }
  const { regradeRefusal } = proxyActivities<HostActivities>({
    taskQueue: where.queue, scheduleToStartTimeout: '1 minute', startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 3 },
  });
  try {
    return await regradeRefusal.executeWithOptions({ summary: `can ${where.queue} regrade ${input.episode.taskId}?` }, [{ input, plan }]);
  } catch (err) {
    return where.queue === input.from.queue
      ? `the host that ran it (queue ${input.from.queue}) did not answer: ${maskingFailure(err).reason}`
      : `the host chosen to regrade it from the results store (queue ${where.queue}) did not answer: ${maskingFailure(err).reason}`;
  }
}
