// The job's config.json and result.json (harbor/models/job) from what the batch is and the trials written so far.
// Pure: the newest attempt of each (task, repeat) is the one the stats count; earlier attempts stay as trials.
import { dirname } from 'node:path';
import { newestOf } from '../newest.ts';
import { passAtKOf } from '../results.ts';
import { evalsKey, type JobMeta } from './job-meta.ts';
import { uuidOf } from './names.ts';
import type { HarborEvalStats, HarborJobConfig, HarborJobResult, HarborTrialResult } from './types.ts';

export function jobConfigOf(meta: JobMeta): HarborJobConfig {
  return {
    job_name: meta.batchId,
    jobs_dir: dirname(meta.jobDir),
    n_attempts: meta.repeats,
    n_concurrent_trials: meta.concurrency,
    agents: [{ name: meta.agent ?? 'unknown', model_name: meta.model, kwargs: meta.agentArgs }],
    datasets: meta.datasetPath ? [{ path: meta.datasetPath }] : [],
    berth: { batch_id: meta.batchId, dataset: meta.datasetName, agent: meta.agent },
  };
}

export interface JobProgress {
  /** When the batch closed; null while it runs. */
  finishedAt: string | null;
  updatedAt: string;
  /** Episodes running now (0 when unknown or closed). */
  running: number;
  /** Episodes whose workflow failed or was cancelled: no row, so no trial. */
  failedEpisodes: number;
  skippedTasks: number;
}

const sum = (values: Array<number | null>): number | null =>
  values.some((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null;

/** The trials that count: the newest attempt of each (task, repeat). */
export const reportedTrials = (trials: readonly HarborTrialResult[]): HarborTrialResult[] =>
  newestOf(trials, (t) => ({ task: t.task_name, repeat: t.berth.repeat, attempt: t.berth.attempt }));

function evalStats(reported: HarborTrialResult[]): HarborEvalStats {
  const scored = reported.filter((t) => t.verifier_result?.rewards);
  const rewardOf = (t: HarborTrialResult) => t.verifier_result!.rewards!.reward ?? 0;
  const reward_stats: HarborEvalStats['reward_stats'] = {};
  for (const t of scored) {
    for (const [key, value] of Object.entries(t.verifier_result!.rewards!)) {
      const byValue = (reward_stats[key] ??= {});
      (byValue[String(value)] ??= []).push(t.trial_name);
    }
  }
  const exception_stats: HarborEvalStats['exception_stats'] = {};
  for (const t of reported) if (t.exception_info) (exception_stats[t.exception_info.exception_type] ??= []).push(t.trial_name);
  const passes = passAtKOf(scored.map((t) => ({ task: t.task_name, reward: rewardOf(t) })));
  return {
    n_trials: scored.length,
    n_errors: reported.filter((t) => t.exception_info).length,
    // Berth's mean: over the scored (unmasked) trials; a masked trial has no verifier_result and is not in it.
    metrics: [{ mean: scored.length ? scored.reduce((a, t) => a + rewardOf(t), 0) / scored.length : null }],
    pass_at_k: Object.fromEntries(passes.map((v, i) => [String(i + 1), v])),
    reward_stats,
    exception_stats,
  };
}

export function jobResultOf(meta: JobMeta, trials: readonly HarborTrialResult[], progress: JobProgress): HarborJobResult {
  const reported = reportedTrials(trials);
  const reportedNames = new Set(reported.map((t) => t.trial_name));
  const total = meta.tasks.length * meta.repeats;
  const errored = reported.filter((t) => t.exception_info).length;
  const contexts = reported.flatMap((t) => (t.agent_result ? [t.agent_result] : (t.step_results ?? []).flatMap((s) => (s.agent_result ? [s.agent_result] : []))));
  const evals = evalStats(reported);
  return {
    id: uuidOf(`berth-job/${meta.batchId}`),
    started_at: meta.startedAt,
    updated_at: progress.updatedAt,
    finished_at: progress.finishedAt,
    n_total_trials: total,
    stats: {
      n_completed_trials: reported.length,
      n_errored_trials: errored,
      n_running_trials: progress.running,
      n_pending_trials: Math.max(total - reported.length - progress.running - progress.failedEpisodes, 0),
      n_cancelled_trials: 0,
      n_retries: trials.length - reported.length,
      evals: reported.length ? { [evalsKey(meta.agent ?? 'unknown', meta.model, meta.datasetName)]: evals } : {},
      n_input_tokens: sum(contexts.map((c) => c.n_input_tokens)),
      n_cache_tokens: sum(contexts.map((c) => c.n_cache_tokens)),
      n_output_tokens: sum(contexts.map((c) => c.n_output_tokens)),
      cost_usd: sum(contexts.map((c) => c.cost_usd)),
    },
    trial_results: [],
    berth: {
      batch_id: meta.batchId,
      reported_trials: reported.map((t) => t.trial_name),
      earlier_attempts: trials.filter((t) => !reportedNames.has(t.trial_name)).map((t) => t.trial_name).sort(),
      failed_episodes: progress.failedEpisodes,
      mean_reward: evals.metrics[0]!.mean ?? null,
      skipped_tasks: progress.skippedTasks,
    },
  };
}
