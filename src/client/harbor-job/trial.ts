// One episode attempt (a row) as a Harbor trial: its config.json and result.json (harbor/models/trial). Pure.
import type { ResultRow, TokenUsage } from '../../workflows/types.ts';
import { modelInfoOf, type JobMeta } from './job-meta.ts';
import { trialName, uuidOf } from './names.ts';
import type { HarborAgentContext, HarborException, HarborStepResult, HarborTiming, HarborTrialConfig, HarborTrialResult } from './types.ts';

export const BERTH_AGENT_VERSION = 'berth';

/** When the attempt's workflow started and closed (Temporal's times); unknown ones are null. */
export interface AttemptTimes { startedAt: string | null; finishedAt: string | null }

const agentContextOf = (u: TokenUsage | undefined): HarborAgentContext | null =>
  u ? { n_input_tokens: u.promptTokens, n_cache_tokens: u.cachedTokens ?? 0, n_output_tokens: u.completionTokens, cost_usd: u.costUsd ?? null } : null;

const exceptionOf = (kind: string | null, reason: string | null, at: string | null): HarborException | null =>
  kind ? { exception_type: kind, exception_message: reason ?? kind, exception_traceback: '', occurred_at: at ?? new Date(0).toISOString() } : null;

/** Harbor's rewards: `reward` first (the reward Berth scored), then the verifier's own keys. */
const rewardsOf = (reward: number | null, keys: Record<string, number>): Record<string, number> => ({ ...keys, reward: reward ?? 0 });

/**
 * Phase times laid end to end from the workflow's start: Berth records each phase's seconds, not its clock times,
 * so these are the phases' lengths placed in order (seed, agent, verify).
 */
export function phaseTimings(times: AttemptTimes, timings: Record<string, number>): Record<'environment_setup' | 'agent_execution' | 'verifier', HarborTiming | null> {
  const start = times.startedAt ? Date.parse(times.startedAt) : NaN;
  let at = start;
  const next = (sec: number | undefined): HarborTiming | null => {
    if (sec === undefined || Number.isNaN(start)) return null;
    const from = at;
    at += sec * 1000;
    return { started_at: new Date(from).toISOString(), finished_at: new Date(at).toISOString() };
  };
  return { environment_setup: next(timings.seed), agent_execution: next(timings.agent), verifier: next(timings.verify) };
}

/** A single-step task's one turn is named after the task (its plan's only step); a multi-step task's after its steps. */
export const isMultiStep = (row: ResultRow): boolean => row.turns.some((t) => t.step !== row.task_id);

export function trialConfigOf(row: ResultRow, meta: JobMeta): HarborTrialConfig {
  const taskPath = meta.tasks.find((t) => t.taskId === row.task_id)?.taskPath ?? row.task_id;
  return {
    task: { path: taskPath, source: meta.datasetName },
    trial_name: trialName(row.task_id, row.workflow_id),
    trials_dir: meta.jobDir,
    agent: { name: meta.agent ?? 'unknown', model_name: meta.model, kwargs: meta.agentArgs },
    job_id: uuidOf(`berth-job/${meta.batchId}`),
  };
}

export function trialResultOf(row: ResultRow, meta: JobMeta, times: AttemptTimes, files: string): HarborTrialResult {
  const config = trialConfigOf(row, meta);
  const multiStep = isMultiStep(row);
  const steps: HarborStepResult[] | null = multiStep
    ? row.turns.map((t) => ({
      step_name: t.step,
      agent_result: agentContextOf(t.usage),
      // A masked turn has no reward (null); a scored failure's is 0.
      verifier_result: t.reward === null ? null : { rewards: rewardsOf(t.reward, t.verifier_rewards) },
      exception_info: exceptionOf(t.failure_kind, t.failure_kind === row.failure_kind ? row.failure_reason : null, times.finishedAt),
    }))
    : null;
  return {
    id: uuidOf(`${row.workflow_id}/${row.run_id}`),
    task_name: row.task_id,
    trial_name: config.trial_name,
    trial_uri: `file://${meta.jobDir}/${config.trial_name}`,
    task_id: { path: config.task.path },
    source: meta.datasetName,
    task_checksum: row.digest,
    config,
    agent_info: { name: meta.agent ?? 'unknown', version: BERTH_AGENT_VERSION, model_info: modelInfoOf(meta.model) },
    // Harbor records a multi-step trial's usage on its steps only.
    agent_result: steps ? null : agentContextOf(row.usage),
    verifier_result: row.mask_sample ? null : { rewards: rewardsOf(row.reward, row.verifier_rewards) },
    verifier_environment_mode: steps ? null : row.verifier_mode,
    exception_info: exceptionOf(row.failure_kind, row.failure_reason, times.finishedAt),
    started_at: times.startedAt,
    finished_at: times.finishedAt,
    ...phaseTimings(times, row.timings),
    agent_setup: null,
    step_results: steps,
    berth: {
      batch_id: meta.batchId, workflow_id: row.workflow_id, run_id: row.run_id, repeat: row.repeat, attempt: row.attempt,
      masked: row.mask_sample, failure_kind: row.failure_kind, failure_reason: row.failure_reason, host: row.host,
      regraded_from: row.regraded_from ?? null, stopped_after_turn: row.stopped_after_turn, files,
    },
  };
}
