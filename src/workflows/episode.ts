import {
  ActivityFailure, ApplicationFailure, CancellationScope, TimeoutFailure, proxyActivities,
  upsertSearchAttributes, workflowInfo,
} from '@temporalio/workflow';
import type * as shared from '../activities/shared.ts';
import type * as host from '../activities/host.ts';
import { rollUp, shouldStop } from './rollup.ts';
import { BERTH_FAILURE_KIND, BERTH_OUTCOME, BERTH_REWARD, BERTH_TURN } from './search-attributes.ts';
import type { EpisodeInput, EpisodePlan, HostLease, ResultRow, SandboxRef, TurnOutcome } from './types.ts';

const { planEpisode } = proxyActivities<typeof shared>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['berth:task_refused', 'berth:digest_moved'] },
});
const { pickHost } = proxyActivities<typeof shared>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

const GRACE_SEC = 60;

function hostActivities(lease: HostLease, plan: EpisodePlan) {
  const longest = Math.max(...plan.steps.map((s) => Math.max(s.agentTimeoutSec, s.verifierTimeoutSec)));
  const common = { taskQueue: lease.queue, scheduleToStartTimeout: '5 minutes' } as const;
  const retry = { maximumAttempts: 3, initialInterval: '2 seconds', nonRetryableErrorTypes: MASKING_KINDS };
  return {
    seed: proxyActivities<typeof host>({ ...common, startToCloseTimeout: '30 minutes', heartbeatTimeout: '60 seconds', retry }).seed,
    turn: proxyActivities<typeof host>({ ...common, startToCloseTimeout: `${longest + GRACE_SEC} seconds`, heartbeatTimeout: '45 seconds', retry }),
    teardown: proxyActivities<typeof host>({ ...common, startToCloseTimeout: '2 minutes', retry: { maximumAttempts: 5 } }).teardown,
  };
}

const MASKING_KINDS = ['provider_unavailable', 'verifier_error', 'harbor:overlay_failed', 'harbor:entrypoint_failed', 'harbor:seed_failed'];

/** The kind a failed activity stands for: typed failures keep theirs, a host that never answers is a lost sandbox. */
function failureOf(err: unknown): { kind: string; reason: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.type && MASKING_KINDS.includes(cause.type)) {
    return { kind: cause.type, reason: cause.message };
  }
  if (cause instanceof TimeoutFailure) return { kind: 'provider_unavailable', reason: `sandbox host did not answer in time (${cause.timeoutType})` };
  throw err;
}

function maskedTurn(step: string, kind: string, reason: string): TurnOutcome {
  return { step, reward: null, verifier_rewards: {}, failure_kind: kind, failure_reason: reason, masked: true, response_text: '', timings: {} };
}

export async function episodeWorkflow(input: EpisodeInput): Promise<ResultRow> {
  const info = workflowInfo();
  const plan = await planEpisode(input);
  const lease = await pickHost({ episodeId: info.workflowId });
  const acts = hostActivities(lease, plan);
  const turns: TurnOutcome[] = [];
  let sandbox: SandboxRef | undefined;
  let stoppedAfter: number | null = null;
  const timings: Record<string, number> = {};
  try {
    try {
      sandbox = await acts.seed({ input, plan, workflowId: info.workflowId, runId: info.runId });
    } catch (err) {
      const f = failureOf(err);
      turns.push(maskedTurn(plan.steps[0]?.name ?? 'main', f.kind, f.reason));
    }
    for (let i = 0; sandbox && i < plan.steps.length; i++) {
      const step = plan.steps[i]!;
      upsertSearchAttributes([{ key: BERTH_TURN, value: i + 1 }]);
      let outcome: TurnOutcome;
      try {
        const label = plan.multiStep ? `turn ${i + 1}/${plan.steps.length} agent: ${step.name}` : `agent ${input.agent}`;
        const agent = await acts.turn.agentTurn.executeWithOptions({ summary: label }, [{ input, plan, sandbox, turn: i }]);
        outcome = await acts.turn.verifyTurn.executeWithOptions({ summary: `verify ${step.name}` }, [{ input, plan, sandbox, turn: i, responseText: agent.responseText }]);
      } catch (err) {
        const f = failureOf(err);
        outcome = maskedTurn(step.name, f.kind, f.reason);
      }
      turns.push(outcome);
      for (const [phase, sec] of Object.entries(outcome.timings)) timings[phase] = (timings[phase] ?? 0) + sec;
      if (i < plan.steps.length - 1 && shouldStop(outcome, step.minReward)) {
        stoppedAfter = i + 1;
        break;
      }
    }
  } finally {
    if (sandbox) {
      const ref = sandbox;
      await CancellationScope.nonCancellable(() => acts.teardown({ sandbox: ref, episodeId: info.workflowId }));
    }
  }
  const result = rollUp(turns, plan.strategy);
  const last = turns[turns.length - 1];
  const row: ResultRow = {
    task_id: input.taskId,
    repeat: input.repeat,
    attempt: input.attempt,
    reward: result.masked ? null : result.reward,
    verifier_rewards: result.verifier_rewards,
    ...(result.reward_components ? { reward_components: result.reward_components } : {}),
    failure_kind: result.failure_kind,
    failure_reason: result.failure_reason,
    mask_sample: result.masked,
    turns: turns.map((t) => ({ step: t.step, reward: t.reward, verifier_rewards: t.verifier_rewards, failure_kind: t.failure_kind })),
    stopped_after_turn: stoppedAfter,
    response: { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: last?.response_text ?? '' }] }] },
    response_text: last?.response_text ?? '',
    verifier_mode: plan.verifierMode,
    digest: plan.digest,
    timings,
    workflow_id: info.workflowId,
    run_id: info.runId,
    host: lease.host,
    logs_dir: sandbox?.logsDir ?? null,
  };
  upsertSearchAttributes([
    { key: BERTH_OUTCOME, value: row.mask_sample ? 'masked' : 'scored' },
    ...(row.reward !== null ? [{ key: BERTH_REWARD, value: row.reward }] : []),
    ...(row.failure_kind ? [{ key: BERTH_FAILURE_KIND, value: row.failure_kind }] : []),
  ]);
  return row;
}
