import {
  ParentClosePolicy, allHandlersFinished, condition, continueAsNew, defineQuery, defineUpdate, getExternalWorkflowHandle, patched, setHandler,
  startChild, workflowInfo,
} from '@temporalio/workflow';
import { episodeWorkflow } from './episode.ts';
import { episodeStartOptions } from './public.ts';
import { episodeDoneSignal, reportBySignal, type EpisodeDone } from './signals.ts';
import {
  acknowledge, addGroups, deliverComplete, dropQueue, finished, groupsAfter, newRunState, recordAttempt, takeNext, type Attempt, type EpisodeOutcome,
  type RunState,
} from '../rollouts/run-state.ts';
import { applyPolicyChange, groupPolicyProblem, POLICY_QUERY, policyChangeProblem, setDraining, type PolicyChange } from '../rollouts/policy.ts';
import { episodeTraining, gatewayPolicy, runEpisodeId } from '../rollouts/episodes.ts';
import { RUN_QUERIES, RUN_UPDATES, type AddWork } from '../rollouts/run-input.ts';
import type { RolloutRunInput } from './rollout-types.ts';
import type { GatewayPolicyState, Group, PolicyState, RunStatus } from '../rollouts/types.ts';
import type { EpisodeInput, ResultRow } from './types.ts';

interface Running {
  id: string;
  at: Attempt;
  startVersion: number;
}

/** What a run carries across continue-as-new. */
export interface RunCarry {
  state: RunState;
  running: Running[];
  cancelled: boolean;
  keepOpen: boolean;
  concurrency: number;
}

const statusQuery = defineQuery<RunStatus>(RUN_QUERIES.status);
const groupsQuery = defineQuery<Group[], [number, number]>(RUN_QUERIES.groups);
const policyQuery = defineQuery<GatewayPolicyState>(POLICY_QUERY);
const ackUpdate = defineUpdate<number, [number]>(RUN_UPDATES.ack);
const addWorkUpdate = defineUpdate<number[], [AddWork]>(RUN_UPDATES.addWork);
const setPolicyUpdate = defineUpdate<PolicyState, [PolicyChange]>(RUN_UPDATES.setPolicy);
const drainUpdate = defineUpdate<PolicyState>(RUN_UPDATES.drain);
const resumeUpdate = defineUpdate<PolicyState>(RUN_UPDATES.resume);
const cancelUpdate = defineUpdate<RunStatus>(RUN_UPDATES.cancel);
const closeUpdate = defineUpdate<RunStatus>(RUN_UPDATES.close);

/**
 * Patch: the episodes a run can start are started together, in one workflow task, instead of one workflow task each
 * (32 episodes waited up to 32 round trips for their start). A run begun before replays one at a time, as it ran.
 */
const STARTS_TOGETHER = 'rollout-starts-together';

/** How long the run waits, before it continues as new, for a child that closed as it was told to signal. */
const CLOSING_WAIT = '1 minute';

const outcomeOf = (id: string, row: ResultRow | undefined): EpisodeOutcome | undefined => row && {
  reward: row.reward, mask_sample: row.mask_sample, failure_kind: row.failure_kind, failure_reason: row.failure_reason, workflow_id: id,
  logs_dir: row.logs_dir, ...(row.training ? { training: row.training } : {}),
};

const outcomeOfDone = (done: EpisodeDone): EpisodeOutcome | undefined => (done.outcome === 'failed' ? undefined : {
  reward: done.reward, mask_sample: done.outcome === 'masked', failure_kind: done.detail?.failure_kind ?? null,
  failure_reason: done.detail?.failure_reason ?? null, workflow_id: done.workflowId, logs_dir: done.detail?.logs_dir ?? null,
  ...(done.detail?.training ? { training: done.detail.training } : {}),
});

/**
 * A rollout run (issue 41): groups of n samples per task, each sample an episode (a child workflow), at most
 * `concurrency` at once. A finished episode goes through the run's group policy and staleness (src/rollouts/run-state.ts);
 * a complete group gets the next sequence number and waits until the trainer acknowledges it. Its workflow id is the
 * run's idempotency key; everything a trainer reconnects to (groups, cursor, policy version) lives here.
 */
export async function rolloutRunWorkflow(input: RolloutRunInput, carry?: RunCarry): Promise<RunStatus> {
  const runId = workflowInfo().workflowId;
  let state: RunState;
  if (carry) state = carry.state;
  else {
    state = newRunState({ groupPolicy: input.groupPolicy, maxStaleness: input.maxStaleness ?? null, policy: { ...input.policy, draining: false, seq: 0 } });
    addGroups(state, input.tasks, input.n);
  }
  const running = new Map((carry?.running ?? []).map((r) => [r.id, r]));
  let cancelled = carry?.cancelled ?? false;
  let keepOpen = carry?.keepOpen ?? input.keepOpen ?? false;
  const concurrency = carry?.concurrency ?? input.concurrency;
  let changes = 0;
  const touched = <T>(value: T): T => { changes++; return value; };
  const status = (): RunStatus => ({
    runId, state: cancelled ? 'cancelled' : finished(state) && running.size === 0 && !keepOpen ? 'done' : 'running', policy: state.policy,
    groupsTotal: state.nextGroup, groupsOpen: state.open.length, groupsWaiting: state.waiting.length, acked: state.acked, lastSeq: state.lastSeq,
    running: running.size, queued: state.queue.length, counters: state.counters, keepOpen,
    complete: running.size === 0 && (cancelled || (!keepOpen && state.open.length === 0 && state.queue.length === 0)),
  });

  const closed = (id: string, outcome: EpisodeOutcome | undefined): void => {
    const r = running.get(id);
    if (!r) return;
    running.delete(id);
    recordAttempt(state, r.at, r.startVersion, outcome);
    deliverComplete(state);
    changes++;
  };

  setHandler(statusQuery, status);
  setHandler(groupsQuery, (after, limit) => groupsAfter(state, after, limit > 0 ? limit : Infinity));
  setHandler(policyQuery, () => gatewayPolicy(state.policy));
  setHandler(episodeDoneSignal, (done) => closed(done.workflowId, outcomeOfDone(done)));
  setHandler(ackUpdate, (seq) => touched(acknowledge(state, seq)), {
    validator: (seq) => { if (!Number.isInteger(seq) || seq < 0) throw new Error(`ack needs a group sequence number ≥ 0, got ${JSON.stringify(seq)}`); },
  });
  setHandler(addWorkUpdate, (work) => touched(addGroups(state, work.tasks, work.n ?? input.n)), {
    validator: (work) => {
      if (cancelled) throw new Error('the run is cancelled: start a new run (with a new key) for more work');
      if (!Array.isArray(work?.tasks) || work.tasks.length === 0) throw new Error('add-work needs at least one task');
      if (work.n !== undefined && !(Number.isInteger(work.n) && work.n >= 1)) throw new Error(`n must be a whole number ≥ 1, got ${JSON.stringify(work.n)}`);
    },
  });
  setHandler(setPolicyUpdate, (change) => touched(state.policy = applyPolicyChange(state.policy, change)), {
    validator: (change) => { const problem = policyChangeProblem(state.policy, change ?? {}); if (problem) throw new Error(problem); },
  });
  setHandler(drainUpdate, () => touched(state.policy = setDraining(state.policy, true)));
  setHandler(resumeUpdate, () => touched(state.policy = setDraining(state.policy, false)));
  setHandler(closeUpdate, () => { keepOpen = false; return touched(status()); });
  setHandler(cancelUpdate, async () => {
    cancelled = true;
    dropQueue(state);
    changes++;
    // Running episodes are cancelled; each still tears its sandbox down before it closes.
    await Promise.all([...running.keys()].map((id) => getExternalWorkflowHandle(id).cancel().catch(() => undefined)));
    return status();
  });
  if (groupPolicyProblem(input.groupPolicy) !== null) throw new Error(groupPolicyProblem(input.groupPolicy)!);

  const limit = input.continueAsNewAfter ?? 500;
  let startedThisRun = 0;
  for (;;) {
    const starts: Promise<void>[] = [];
    while (!cancelled && running.size < Math.max(1, concurrency) && state.queue.length > 0) {
      const next = takeNext(state)!;
      const ep: EpisodeInput = {
        ...input.base, taskId: next.task.taskId, taskPath: next.task.taskPath, digest: next.task.digest,
        ...(next.task.baseImageId !== undefined ? { baseImageId: next.task.baseImageId } : {}),
        repeat: next.attempt.sample + 1, attempt: next.attempt.attempt,
      };
      const id = runEpisodeId(input.base.batchId, next.task.taskId, next.attempt);
      ep.training = episodeTraining(runId, state.policy);
      running.set(id, { id, at: next.attempt, startVersion: state.policy.version });
      const started = startChild(episodeWorkflow, { ...episodeStartOptions(ep), workflowId: id, parentClosePolicy: ParentClosePolicy.ABANDON })
        .then((child) => { void child.result().then((row) => closed(id, outcomeOf(id, row)), () => closed(id, undefined)); });
      if (patched(STARTS_TOGETHER)) starts.push(started);
      else await started;
      startedThisRun++;
    }
    await Promise.all(starts);
    const done = running.size === 0 && (cancelled ? true : finished(state) && !keepOpen);
    if (done) break;
    if (startedThisRun >= limit || workflowInfo().continueAsNewSuggested) {
      await handOver(running);
      await condition(allHandlersFinished);
      await continueAsNew<typeof rolloutRunWorkflow>(input, { state, running: [...running.values()], cancelled, keepOpen, concurrency });
    }
    const seen = changes;
    await condition(() => changes !== seen);
  }
  // Queries keep answering until the trainer has read the last groups: the run closes once nothing is waiting.
  await condition(allHandlersFinished);
  return status();
}

/** Before continuing as new, every running child is told to report its closing by signal (see batch.ts). */
async function handOver(running: Map<string, Running>): Promise<void> {
  await Promise.all([...running.keys()].map(async (id) => {
    const told = await getExternalWorkflowHandle(id).signal(reportBySignal).then(() => true, () => false);
    if (!told) await condition(() => !running.has(id), CLOSING_WAIT);
  }));
}
