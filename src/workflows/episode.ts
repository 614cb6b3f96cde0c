import {
  ActivityCancellationType, ActivityFailure, ApplicationFailure, CancellationScope, executeChild, getExternalWorkflowHandle, isCancellation, patched, proxyActivities, proxyLocalActivities, setHandler, sleep,
  upsertSearchAttributes, workflowInfo,
} from '@temporalio/workflow';
import { doneOf, episodeDoneSignal, reportBySignal, type EpisodeDone } from './signals.ts';
import type { SharedActivities } from '../activities/shared-activities.ts';
import type { HostActivities } from '../activities/host-activities.ts';
import { FINAL_ERROR_TYPES, TASK_ERROR_TYPES, failedTurn, failureCause, maskedTurn, maskingFailure, plannedSeedFailure, seededSandboxOf } from './failures.ts';
import { openaiTurnWorkflow } from './openai-turn.ts';
import { rollUp, shouldStop, stoppedByScore } from './rollup.ts';
import { seedsWithAgent } from './seed-with-agent.ts';
import { buildRow } from './row.ts';
import { STORE_BESIDE_CLOSING, afterLastVerifyOf, storeEpisodeFiles, storeEpisodeFilesOf } from './store-files.ts';
import { HELD_BACKSTOP_SEC } from '../outcomes/turn-limits.ts';
import { BERTH_FAILURE_KIND, BERTH_OUTCOME, BERTH_REWARD, BERTH_TURN } from '../config/search-attributes.ts';
import type { AfterLastVerify, AgentTurnOutput, EpisodeInput, EpisodePlan, HostLease, ResultRow, SandboxRef, StoredEpisodeFiles, TurnOutcome } from './types.ts';

const { planEpisode } = proxyActivities<SharedActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [...TASK_ERROR_TYPES] },
});
const { pickHost } = proxyActivities<SharedActivities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});
/** Local: its load is a few milliseconds; past 1 minute the episode plans in planAndPickHost instead. */
const { planAndTryHost } = proxyLocalActivities<SharedActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [...TASK_ERROR_TYPES] },
});
const { planAndPickHost } = proxyActivities<SharedActivities>({
  startToCloseTimeout: '24 hours',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: [...TASK_ERROR_TYPES] },
});

/**
 * One patch for every change since the first stored histories, so a new episode records one marker (and one
 * TemporalChangeVersion upsert) instead of one per change: plan and slot in one activity, the batch told while
 * the sandbox is being removed, and the last verification tearing down (no teardown activity after it).
 */
const EPISODE_V2 = 'episode-v2';
/**
 * Changes since episode-v2: each verification has its own time limit (its collect hooks, a separate verifier's start,
 * test.sh), and a seed failure found while planning (an unset `${VAR}`) is a masked row instead of a failed workflow.
 */
const EPISODE_V3 = 'episode-v3';
/** A step's own preparation (workdir/, setup.sh, [steps.healthcheck]) as an activity before its agent (issue 14). */
const STEP_SETUP = 'step-setup';
/**
 * Everything of episode-v2 and episode-v3 under one marker, recorded in the first workflow task (so a new episode
 * records one marker and one TemporalChangeVersion upsert instead of two of each), and since it: a single-step
 * episode seeds and runs its agent in one activity (seedThenAgentTurn).
 */
const EPISODE_V4 = 'episode-v4';
/**
 * Everything of episode-v4, and since it: the batch that started the episode reads its closing from the child's
 * completion, so the episode signals its batch only when told to (the batch is about to continue as new, and its next
 * run will not see this child's completion): no signal round trip before an episode closes.
 */
const EPISODE_V5 = 'episode-v5';
/**
 * Everything of episode-v5, and since it: a single-step episode on a sandbox queue several workers share seeds with
 * its agent (what cluster-seed-with-agent marked on its own): one marker and one TemporalChangeVersion upsert per
 * episode there, not two of each.
 */
const EPISODE_V6 = 'episode-v6';
/**
 * Everything of episode-v6, and since it: the plan and a first try for a slot as a local activity (planAndTryHost), the
 * activity only when no slot was free at once.
 */
const EPISODE_V8 = 'episode-v8';
/**
 * A min_reward gate reads the reward file's `reward` key, missing = minus infinity (issue 37), where it read the
 * turn's score. Asked only when the two readings differ, so an episode that never meets the case records nothing.
 */
const MIN_REWARD_KEY = 'min-reward-key';

/** Multi-Step Harbor Tasks § Early stop; a run from before MIN_REWARD_KEY replays its own reading. */
const stopsAfter = (outcome: TurnOutcome, gate: EpisodePlan['steps'][number]['minReward']): boolean =>
  shouldStop(outcome, gate) && (stoppedByScore(outcome, gate) || patched(MIN_REWARD_KEY));

/**
 * A single-step episode on a sandbox queue several workers share (a cluster) seeds and runs its agent in one activity,
 * as elsewhere (seedsWithAgent): one activity dispatch and one workflow task fewer. Asked only of such episodes begun
 * before episode-v6.
 */
const CLUSTER_SEED_WITH_AGENT = 'cluster-seed-with-agent';

/**
 * A batch about to continue as new tells its running children to report their closing by signal (reportBySignal).
 * One told after it closed with its row (no signal: not told yet) but before it completed, while its teardown still
 * ran, completed without a word, and the batch's next run waited for it forever (episode-told-late-v0). Since this
 * patch it signals then. Asked only when that happens, so other episodes record nothing.
 */
const REPORT_TOLD_LATE = 'report-told-late';

/** Which of the consolidated patches this run has: decided once, in the first workflow task. */
interface Versions {
  v2: boolean;
  v4: boolean;
  v5: boolean;
  v6: boolean;
  v8: boolean;
}

/** A task's own error (refused, moved, a seed that cannot work: not retried): the activity would answer the same. */
const isTaskError = (err: unknown): boolean => {
  const cause = failureCause(err);
  return cause instanceof ApplicationFailure && (cause.nonRetryable || (TASK_ERROR_TYPES as readonly string[]).includes(cause.type ?? ''));
};

async function planAndLease(input: EpisodeInput, episodeId: string, versions: Versions): Promise<{ plan: EpisodePlan; lease: HostLease }> {
  if (versions.v8) {
    try {
      const tried = await planAndTryHost({ input, episodeId });
      if (tried.lease) return { plan: tried.plan, lease: tried.lease };
    } catch (err) {
      if (isTaskError(err)) throw err;
    }
  }
  if (versions.v2) {
    const { plan, lease } = await planAndPickHost.executeWithOptions({ summary: `plan ${input.taskId}, pick a host` }, [{ input, episodeId }]);
    return { plan, lease };
  }
  const plan = await planEpisode(input);
  return { plan, lease: await pickHost({ episodeId }) };
}

/** Newer runs record episode-v8 alone; a run that began before it replays its own markers (patched() is false for the rest). */
function decideVersions(): Versions {
  const v8 = patched(EPISODE_V8);
  const v6 = v8 || patched(EPISODE_V6);
  const v5 = v6 || patched(EPISODE_V5);
  const v4 = v5 || patched(EPISODE_V4);
  return { v8, v6, v5, v4, v2: v4 || patched(EPISODE_V2) };
}

/** episode-v3's behaviour: in every run with episode-v4, else where the run recorded its own marker. */
const hasV3 = (versions: Versions): boolean => versions.v4 || patched(EPISODE_V3);

const GRACE_SEC = 60;
/** Recorded only when a teardown failed (its host gone): the episode closes with its row instead of failing. */
const TEARDOWN_HOST_GONE = 'teardown-host-gone';

/** The seed found no layer of the episode's installed agent on its host. */
const AGENT_LAYER = 'agent-layer';
const isLayerMissing = (err: unknown): boolean =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === 'berth:agent_layer_missing';

/** Proxies bound to the host that owns the sandbox (docs/design.md section 3, Affinity). */
function hostActivities(lease: HostLease, plan: EpisodePlan, versions: Versions, training: boolean) {
  // A trainer's drain moves an agent's budget on (src/agents/moving-deadline.ts): its turn may run that much longer.
  const longest = Math.max(...plan.steps.map((s) => Math.max(s.agentTimeoutSec, s.verifierTimeoutSec))) + (training ? HELD_BACKSTOP_SEC : 0);
  const common = { taskQueue: lease.queue, scheduleToStartTimeout: `${plan.scheduleToStartSec} seconds` } as const;
  const retry = { maximumAttempts: 3, initialInterval: '2 seconds', nonRetryableErrorTypes: [...FINAL_ERROR_TYPES] };
  const heartbeatTimeout = `${plan.heartbeatTimeoutSec} seconds`;
  const turn = proxyActivities<HostActivities>({ ...common, startToCloseTimeout: `${longest + GRACE_SEC} seconds`, heartbeatTimeout, retry });
  const ownLimits = plan.steps.every((s) => s.verifyTimeoutSec !== undefined) && hasV3(versions);
  return {
    // The seed's limit and the turn's; like the seed, a cancelled episode waits for it (it may be creating the sandbox).
    seedThenAgent: proxyActivities<HostActivities>({
      ...common, startToCloseTimeout: `${plan.seedTimeoutSec + longest + GRACE_SEC} seconds`, heartbeatTimeout, retry,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }).seedThenAgentTurn,
    // Installing an agent into a layer is long (a build); it runs only on a host that lacks the layer.
    install: proxyActivities<HostActivities>({
      ...common, startToCloseTimeout: '2 hours', heartbeatTimeout, retry: { ...retry, maximumAttempts: 2 },
    }).installAgentLayer,
    // A cancelled episode waits for its seed to finish, so teardown never races a container being created.
    seed: proxyActivities<HostActivities>({
      ...common, startToCloseTimeout: `${plan.seedTimeoutSec} seconds`, heartbeatTimeout, retry,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    }).seed,
    turn,
    /** The verification of turn `i`, under its own limit (plans made before it had none: the turn's). */
    verify: (i: number) => ownLimits
      ? proxyActivities<HostActivities>({ ...common, startToCloseTimeout: `${plan.steps[i]!.verifyTimeoutSec!} seconds`, heartbeatTimeout, retry }).verifyTurn
      : turn.verifyTurn,
    teardown: proxyActivities<HostActivities>({ ...common, startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 5 } }).teardown,
    stepSetup: proxyActivities<HostActivities>({
      ...common, startToCloseTimeout: `${Math.max(0, ...plan.steps.map((s) => s.setupSec ?? 0)) + GRACE_SEC} seconds`, heartbeatTimeout, retry,
    }).stepSetup,
  };
}

type Acts = ReturnType<typeof hostActivities>;

interface EpisodeState {
  /** Recorded in the first workflow task (patch episode-v2): the last verification also tears down. */
  v2: boolean;
  /** The seed and the first agent run as one activity (seedsWithAgent). */
  seedWithAgent: boolean;
  /** The last verification handed the sandbox to removal: no teardown activity needed. */
  tornDown?: boolean;
  seedStarted?: boolean;
  seedSec?: number;
  turns: TurnOutcome[];
  sandbox?: SandboxRef;
  /** The step the episode stopped early after. */
  stoppedAfter: string | null;
  /** What the last verification does after its teardown (patch store-in-last-verify), and whether it did it. */
  afterLast?: AfterLastVerify;
  afterLastDone?: boolean;
  storedInline?: StoredEpisodeFiles;
}

/** Runs `seed`; an installed agent's first episode on a host installs the agent into a layer first, then seeds again. */
async function withAgentLayer<T>(input: EpisodeInput, plan: EpisodePlan, acts: Acts, seed: () => Promise<T>): Promise<T> {
  try {
    return await seed();
  } catch (err) {
    if (!(isLayerMissing(err) && patched(AGENT_LAYER))) throw err;
    await acts.install.executeWithOptions({ summary: `install ${input.agent} into ${input.taskId}'s image` }, [{ input, plan }]);
    return await seed();
  }
}

async function runTurns(input: EpisodeInput, plan: EpisodePlan, acts: Acts, state: EpisodeState): Promise<void> {
  const { workflowId, runId } = workflowInfo();
  const seedStarted = Date.now();
  state.seedStarted = true;
  const seedReq = { input, plan, workflowId, runId };
  const firstStep = plan.steps[0]?.name ?? 'main';
  /** The first turn's agent, when it ran in the seed's activity. */
  let firstAgent: AgentTurnOutput | undefined;
  try {
    if (state.seedWithAgent) {
      upsertSearchAttributes([{ key: BERTH_TURN, value: 1 }]);
      const seeded = await withAgentLayer(input, plan, acts, () => acts.seedThenAgent.executeWithOptions({ summary: `seed ${input.taskId}, agent: ${firstStep}` }, [seedReq]));
      state.sandbox = seeded.sandbox;
      state.seedSec = seeded.seedSec;
      firstAgent = seeded.agent;
    } else {
      state.sandbox = await withAgentLayer(input, plan, acts, () => acts.seed.executeWithOptions({ summary: `seed ${input.taskId}` }, [seedReq]));
      state.seedSec = (Date.now() - seedStarted) / 1000;
    }
  } catch (err) {
    if (isCancellation(err)) throw err;
    const f = maskingFailure(err);
    // The agent failed in the seed's activity: the first turn failed, in the sandbox the seed made.
    const seeded = seededSandboxOf(err);
    if (seeded) state.sandbox = seeded;
    state.turns.push(seeded ? failedTurn(firstStep, f.kind, f.reason, 0) : maskedTurn(firstStep, f.kind, f.reason));
    return;
  }
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    const ranWithSeed = i === 0 ? firstAgent : undefined;
    if (!ranWithSeed) upsertSearchAttributes([{ key: BERTH_TURN, value: i + 1 }]);
    const where = plan.multiStep ? `turn ${i + 1}/${plan.steps.length} ` : '';
    let outcome: TurnOutcome;
    try {
      const req = { input, plan, sandbox: state.sandbox, turn: i };
      if (!ranWithSeed && step.setupSec !== undefined && patched(STEP_SETUP)) {
        await acts.stepSetup.executeWithOptions({ summary: `${where}setup ${step.name}` }, [req]);
      }
      const summary = `${where}agent: ${step.name}`;
      const agent = ranWithSeed ?? (input.agent === 'openai'
        ? await executeChild(openaiTurnWorkflow, { workflowId: `${workflowId}/turn-${i + 1}`, args: [req], staticSummary: summary })
        : await acts.turn.agentTurn.executeWithOptions({ summary }, [req]));
      const last = state.v2 && i === plan.steps.length - 1;
      const afterLast = last && state.afterLast ? { afterLast: state.afterLast } : {};
      const { tornDown, storedInline, ...verified } = await acts.verify(i).executeWithOptions({ summary: `${where}verify ${step.name}` },
        [{ ...req, agentTimings: agent.timings, ...(agent.usage ? { usage: agent.usage } : {}),
          ...('agentOutcome' in agent && agent.agentOutcome ? { agentOutcome: agent.agentOutcome } : {}), ...(last ? { teardownAfter: true } : {}), ...afterLast }]);
      if (tornDown) state.tornDown = true;
      if ('afterLast' in afterLast) {
        state.afterLastDone = true;
        state.storedInline = storedInline;
      }
      outcome = verified;
    } catch (err) {
      if (isCancellation(err)) throw err;
      const f = maskingFailure(err);
      outcome = failedTurn(step.name, f.kind, f.reason, i);
    }
    state.turns.push(outcome);
    if (i < plan.steps.length - 1 && stopsAfter(outcome, step.minReward)) {
      state.stoppedAfter = step.name;
      return;
    }
  }
}

/**
 * One (task, repeat): plan, pick a host (a slot reserved), seed, one turn per step, roll up, and
 * always tear down. An episode past its time budget is masked as harbor:episode_deadline.
 */
export async function episodeWorkflow(input: EpisodeInput): Promise<ResultRow> {
  const info = workflowInfo();
  const told = { toSignal: false };
  setHandler(reportBySignal, () => { told.toSignal = true; });
  let versions: Versions | undefined;
  // The closing not told to the batch: it reads the child's completion, unless it asks for a signal before that.
  let unsent: EpisodeDone | undefined;
  // Before episode-v5 (or told to by a batch about to continue as new), the batch learns of the closing by signal.
  const tellBatch = (done: EpisodeDone): Promise<void> => {
    if (!(versions?.v5 && !told.toSignal)) return signalBatch(done);
    unsent = done;
    return Promise.resolve();
  };
  // Told after the closing was not sent, before the episode completes. Read without an await when false, so the
  // activation's commands are those of histories recorded before.
  const toldLate = (): boolean => unsent !== undefined && told.toSignal && patched(REPORT_TOLD_LATE);
  try {
    versions = decideVersions();
    let planned: Awaited<ReturnType<typeof planAndLease>>;
    try {
      planned = await planAndLease(input, info.workflowId, versions);
    } catch (err) {
      const failed = plannedSeedFailure(err);
      if (failed === null || !hasV3(versions)) throw err;
      const turns = [maskedTurn(failed.step ?? input.taskId, failed.kind, failed.reason)];
      const row = buildRow({ input, plan: undefined, turns, result: rollUp(turns, 'mean'), stoppedAfter: null, sandbox: undefined,
        host: null, workflowId: info.workflowId, runId: info.runId });
      await closeWith(row, tellBatch);
      return row;
    }
    const { plan, lease } = planned;
    const acts = hostActivities(lease, plan, versions, input.training !== undefined);
    const v6 = versions.v6;
    const state: EpisodeState = {
      v2: versions.v2, seedWithAgent: versions.v4 && seedsWithAgent(input, plan, lease, () => v6 || patched(CLUSTER_SEED_WITH_AGENT)), turns: [], stoppedAfter: null,
      ...afterLastVerifyOf(input, lease, versions.v2),
    };
    let pastDeadline = false;
    const body = new CancellationScope();
    const deadline = new CancellationScope();
    void deadline.run(async () => {
      await sleep(plan.episodeBudgetSec * 1000);
      pastDeadline = true;
      body.cancel();
    }).catch(() => undefined);
    // Newer runs tell the batch while the sandbox is being removed: the batch's window moves on one removal
    // sooner and the episode closes one workflow task sooner. The episode still closes only after its teardown.
    const doneBeforeTeardown = versions.v2 || patched('done-signal-before-teardown');
    let rowNext = false;
    let teardown: Promise<void> | undefined;
    try {
      await body.run(() => runTurns(input, plan, acts, state));
      rowNext = true;
    } catch (err) {
      if (!(pastDeadline && isCancellation(err))) throw err;
      state.turns.push(maskedTurn(plan.steps[state.turns.length]?.name ?? 'main', 'harbor:episode_deadline',
        `the episode ran past its budget of ${plan.episodeBudgetSec} s (agent, verifier and setup time of every turn)`));
      rowNext = true;
    } finally {
      deadline.cancel();
      if (state.seedStarted && !state.tornDown) {
        teardown = CancellationScope.nonCancellable(() => acts.teardown({ episodeId: info.workflowId, runId: info.runId }))
          // A host that is gone never takes its teardown: the row stands, and the host's janitor removes what is left.
          .catch((err: unknown) => { if (!patched(TEARDOWN_HOST_GONE)) throw err; });
        if (!(doneBeforeTeardown && rowNext)) await teardown;
      }
    }
    const result = rollUp(state.turns, plan.strategy);
    const row = buildRow({ input, plan, turns: state.turns, result, stoppedAfter: state.stoppedAfter, sandbox: state.sandbox,
      host: lease.host, workflowId: info.workflowId, runId: info.runId });
    if (state.seedSec !== undefined) row.timings = { seed: state.seedSec, ...row.timings };
    // Only with a store: an extra await, even of nothing, reorders this activation's commands for histories before it.
    if (input.episodeSettings.resultsStore) {
      // The last verification told the batch its slot is free and uploaded a small attempt itself; a larger one, or
      // an upload that did not finish there, goes up here.
      if (state.afterLastDone) {
        if (state.storedInline) row.store_key = state.storedInline.key;
        else await storeEpisodeFiles(input, plan, lease, row);
        await Promise.all([closeWith(row, tellBatch), teardown]);
        if (toldLate()) await signalBatch(unsent!);
        return row;
      }
      // The batch is told by signal, so its window moves on while the files go up (a slot held for an upload was a
      // third of a trivial episode's time); the row it closes with still says where they went, or why not.
      if (patched(STORE_BESIDE_CLOSING)) {
        await Promise.all([closeWith(row, signalBatch), storeEpisodeFiles(input, plan, lease, row), teardown]);
        return row;
      }
      await storeEpisodeFilesOf(input, plan, lease, row);
    }
    await Promise.all([closeWith(row, tellBatch), teardown]);
    if (toldLate()) await signalBatch(unsent!);
    return row;
  } catch (err) {
    upsertSearchAttributes([{ key: BERTH_OUTCOME, value: 'failed' }]);
    await CancellationScope.nonCancellable(() => tellBatch(doneOf(info.workflowId, undefined)));
    throw err;
  }
}

/** The row's outcome on the episode's search attributes, and told to the batch. */
async function closeWith(row: ResultRow, tellBatch: (done: EpisodeDone) => Promise<void>): Promise<void> {
  upsertSearchAttributes([
    { key: BERTH_OUTCOME, value: row.mask_sample ? 'masked' : 'scored' },
    ...(row.reward !== null ? [{ key: BERTH_REWARD, value: row.reward }] : []),
    ...(row.failure_kind ? [{ key: BERTH_FAILURE_KIND, value: row.failure_kind }] : []),
  ]);
  await tellBatch(doneOf(workflowInfo().workflowId, row));
}

/** Episodes started by a batch report to it; retries started by a client have no parent. */
async function signalBatch(done: EpisodeDone): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  await getExternalWorkflowHandle(parent.workflowId).signal(episodeDoneSignal, done).catch(() => undefined);
}
