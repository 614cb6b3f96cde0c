import { heartbeatTimeoutSec, scheduleToStartSec } from '../config/env.ts';
import { ApplicationFailure, Context, heartbeat } from '@temporalio/activity';
import { loadBerthConfig } from '../config/berth-config.ts';
import { capabilityRefusal } from '../sandbox/index.ts';
import { checkDigest, envTablesOf, firstUnsetVariable, unsetVariableMessage, type CollectHook, type Task } from '../task/index.ts';
import { trainingRefusal } from '../tokens/index.ts';
import { episodeBudget, healthcheckWorstSec, seedTimeLimitSec, verifyTimeLimitSec } from './budget.ts';
import type { EpisodeInput, EpisodePlan, EpisodeSettings, HostLease } from './types.ts';
import { typed } from './failures.ts';
import type { HostServices } from '../host/deps.ts';
import { beating } from './beating.ts';
import { composeRefusal } from '../host/compose-refusal.ts';
import { modelInSandbox } from '../host/phase-network.ts';
import { pickHost } from './pick-host.ts';
import { stepNeedsSetup, stepSetupBudgetSec } from './step-setup.ts';

const SETUP_PER_TURN_SEC = 60;
const READY_GRACE_SEC = 60;
/** A build-mode image not prepared ahead (`berth prepare`) is built during the seed. */
const BUILD_ALLOWANCE_SEC = 1800;

/**
 * Starting a separate verifier's sandbox and its declared healthcheck (its image's HEALTHCHECK is under the ready
 * timeout), for the task's [verifier] or a step's.
 */
function separateVerifierStart(v: Pick<Task['verifier'], 'mode' | 'image' | 'environment'>, settings: EpisodeSettings): { startSec: number; healthcheckSec: number } | undefined {
  if (v.mode !== 'separate') return undefined;
  const build = v.image?.kind === 'build' ? BUILD_ALLOWANCE_SEC : 0;
  const hc = v.environment?.healthcheck;
  return { startSec: settings.sandboxReadyTimeoutSec + READY_GRACE_SEC + build, healthcheckSec: hc ? healthcheckWorstSec(hc) : 0 };
}

export function stepsOf(task: Task, settings: EpisodeSettings): EpisodePlan['steps'] {
  const verifyTimeoutSec = (testSec: number, separate: ReturnType<typeof separateVerifierStart>, stepHooks: readonly CollectHook[] = []) =>
    verifyTimeLimitSec({ collectSec: [...task.verifier.collect, ...stepHooks].map((h) => h.timeout_sec), testSec, ...(separate ? { separate } : {}) });
  if (!task.multi_step) {
    const testSec = task.verifier.timeout_sec;
    return [{ name: task.id, agentTimeoutSec: task.agent.timeout_sec, verifierTimeoutSec: testSec, verifyTimeoutSec: verifyTimeoutSec(testSec, separateVerifierStart(task.verifier, settings)) }];
  }
  return task.steps.map((s) => ({
    name: s.name,
    agentTimeoutSec: s.agent.timeout_sec,
    verifierTimeoutSec: s.verifier.timeout_sec,
    verifyTimeoutSec: verifyTimeoutSec(s.verifier.timeout_sec, separateVerifierStart(s.verifier, settings), s.verifier.collect),
    ...(s.min_reward !== null ? { minReward: typeof s.min_reward === 'number' ? s.min_reward : { ...s.min_reward } } : {}),
    ...(stepNeedsSetup(s) ? { setupSec: stepSetupBudgetSec(task, s) } : {}),
  }));
}

/** docs/design.md section 7, Secrets: an unset `${VAR}` masks the episode now, before a slot or a sandbox (names only). */
function checkVariables(task: Task, input: EpisodeInput, firstStep: string): void {
  const unset = firstUnsetVariable(envTablesOf(task, { solution: input.agent === 'oracle' }), process.env, loadBerthConfig().config.secrets);
  if (unset === null) return;
  throw ApplicationFailure.create({
    type: 'harbor:seed_failed',
    nonRetryable: true,
    message: `${task.path}/task.toml: ${unsetVariableMessage(unset)}`,
    details: [{ step: firstStep }],
  });
}

/**
 * Loads the task (refusing one whose digest moved) and returns the small plan the workflow follows. `episodeId` (the
 * episode's workflow id) is given where an episode is about to seed, the one place the budget warning is logged.
 */
export async function planEpisode(deps: HostServices, input: EpisodeInput, episodeId?: string): Promise<EpisodePlan> {
  return typed(async () => {
    const task = await deps.loadEpisodeTask(input, { fresh: true });
    const digest = checkDigest(input.digest, task);
    if (!digest.ok) throw ApplicationFailure.nonRetryable(digest.reason, 'berth:digest_moved');
    const settings = input.episodeSettings;
    const steps = stepsOf(task, settings);
    checkVariables(task, input, steps[0]!.name);
    const refusal = capabilityRefusal(task, deps.driver.capabilities, deps.driver.sandbox, {
      keepFinalState: input.keepFinalState, ...(modelInSandbox(input.agent) ? { agentInSandbox: input.agent } : {}),
    });
    if (refusal) throw ApplicationFailure.nonRetryable(refusal, 'berth:task_refused');
    // Training mode needs an agent whose model calls leave tokens: refused here, before any sandbox.
    const untrainable = input.training ? trainingRefusal(input.agent) : null;
    if (untrainable) throw ApplicationFailure.nonRetryable(untrainable, 'berth:task_refused');
    const groupRefusal = await composeRefusal(deps.driver, task);
    if (groupRefusal) throw ApplicationFailure.nonRetryable(groupRefusal, 'berth:task_refused');
    // Each turn's collect hooks: the task's, and a step's own after them.
    const hooksSec = (hooks: readonly CollectHook[]) => hooks.reduce((s, h) => s + h.timeout_sec, 0);
    const collectSec = (task.multi_step ? task.steps.map((st) => st.verifier.collect) : [[]]).map((own) => hooksSec(task.verifier.collect) + hooksSec(own));
    // Each turn's separate verifier start (a multi-step task's steps may mix modes).
    const separateSec = (task.multi_step ? task.steps.map((st) => st.verifier) : [task.verifier]).map((v) => {
      const start = separateVerifierStart(v, settings);
      return start ? start.startSec + start.healthcheckSec : 0;
    });
    const seedHealthchecks = task.environment.healthcheck ? [task.environment.healthcheck] : [];
    const budget = episodeBudget({
      turns: steps.map((s, i) => ({ agentSec: s.agentTimeoutSec + (s.setupSec ?? 0), verifierSec: s.verifierTimeoutSec + separateSec[i]!, collectSec: collectSec[i]! })),
      setupPerTurnSec: SETUP_PER_TURN_SEC,
      sandboxReadySec: settings.sandboxReadyTimeoutSec + seedHealthchecks.reduce((sum, hc) => sum + healthcheckWorstSec(hc), 0),
      buildTimeoutSec: task.image.mode === 'overlay' ? task.environment.build_timeout_sec : 0,
      pullAttempts: 1,
      readyGraceSec: READY_GRACE_SEC,
      defaultEpisodeSec: settings.defaultTimeoutSec,
      enforceTaskTimeouts: settings.enforceTaskTimeouts,
    });
    if (!budget.ok) throw ApplicationFailure.nonRetryable(`${task.path}: ${budget.reason}`, 'berth:task_refused');
    // Multi-Step Harbor Tasks § Episode time budget: the seed logs this once per episode (a retried plan does not repeat it).
    if (budget.warning && episodeId !== undefined) deps.warnOnce(`budget\0${episodeId}`, `${task.id} (episode ${episodeId}): ${budget.warning}`);
    // A local activity (planAndTryHost) has no heartbeat.
    if (!Context.current().info.isLocal) heartbeat();
    return {
      taskId: task.id,
      digest: task.digest,
      image: task.image.image ?? 'build',
      multiStep: task.multi_step,
      steps,
      strategy: task.multi_step_reward_strategy,
      verifierMode: task.verifier.mode,
      episodeBudgetSec: budget.deadlineSec,
      seedTimeoutSec: seedTimeLimitSec({
        // A Compose task may build its sidecars at seed, then waits for them to be healthy.
        readySec: settings.sandboxReadyTimeoutSec + READY_GRACE_SEC + (task.compose ? settings.sandboxReadyTimeoutSec : 0),
        buildSec: (task.image.mode === 'overlay' ? task.environment.build_timeout_sec : task.image.mode === 'build' ? BUILD_ALLOWANCE_SEC : 0) +
          (task.compose ? BUILD_ALLOWANCE_SEC : 0),
        healthchecks: seedHealthchecks,
      }),
      heartbeatTimeoutSec: heartbeatTimeoutSec(),
      scheduleToStartSec: scheduleToStartSec(),
    };
  });
}

/**
 * planEpisode then pickHost in one activity: a round trip and three history events fewer per episode. The load
 * heartbeats, since this activity has pickHost's heartbeat timeout.
 */
export async function planAndPickHost(deps: HostServices, req: { input: EpisodeInput; episodeId: string }): Promise<{ plan: EpisodePlan; lease: HostLease }> {
  const plan = await beating(() => planEpisode(deps, req.input, req.episodeId));
  return { plan, lease: await pickHost(deps, { episodeId: req.episodeId, task: req.input.digest }) };
}

/**
 * planEpisode then one try for a slot, as a local activity of the episode (patch episode-v8): no activity dispatch, no
 * workflow task of its own and five history events fewer per episode. No lease when no slot is free at once: the
 * episode then waits for one in planAndPickHost, which heartbeats (a local activity cannot).
 */
export async function planAndTryHost(deps: HostServices, req: { input: EpisodeInput; episodeId: string }): Promise<{ plan: EpisodePlan; lease: HostLease | null }> {
  const plan = await planEpisode(deps, req.input, req.episodeId);
  const runId = Context.current().info.workflowExecution?.runId ?? '';
  return { plan, lease: (await deps.slots.tryReserve(req.episodeId, runId, req.input.digest)) ? deps.identity : null };
}

/** planEpisode as the activity of episodes from before planAndPickHost: the episode is the calling workflow. */
export async function planEpisodeActivity(deps: HostServices, input: EpisodeInput): Promise<EpisodePlan> {
  return planEpisode(deps, input, Context.current().info.workflowExecution?.workflowId);
}

/** This host's sandbox queue, without reserving a slot (preparing images). */
export async function hostLease(deps: HostServices): Promise<HostLease> {
  return deps.identity;
}
