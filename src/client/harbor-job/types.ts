// The parts of Harbor 0.25's job and trial models (harbor/models/job, harbor/models/trial) that Berth writes and
// reads, as JSON. Harbor's models ignore keys they do not know, so Berth's own facts go under a `berth` key.

export interface HarborTiming { started_at: string | null; finished_at: string | null }

export interface HarborException { exception_type: string; exception_message: string; exception_traceback: string; occurred_at: string }

/** AgentContext: `n_input_tokens` includes cached input, as the gateway's promptTokens does. */
export interface HarborAgentContext { n_input_tokens: number | null; n_cache_tokens: number | null; n_output_tokens: number | null; cost_usd: number | null }

export interface HarborVerifierResult { rewards: Record<string, number> | null }

export interface HarborStepResult {
  step_name: string;
  agent_result: HarborAgentContext | null;
  verifier_result: HarborVerifierResult | null;
  exception_info: HarborException | null;
}

export interface HarborTrialConfig {
  task: { path: string; source: string | null };
  trial_name: string;
  trials_dir: string;
  agent: { name: string; model_name: string | null; kwargs: Record<string, string> };
  job_id: string;
}

/** What Berth knows of a trial that Harbor's TrialResult has no field for. */
export interface BerthTrialKeys {
  batch_id: string;
  workflow_id: string;
  run_id: string;
  repeat: number;
  attempt: number;
  masked: boolean;
  failure_kind: string | null;
  failure_reason: string | null;
  host: string | null;
  regraded_from: string | null;
  stopped_after_turn: string | null;
  /** Where the episode's files came from, or why the trial folder lacks them. */
  files: string;
}

export interface HarborTrialResult {
  id: string;
  task_name: string;
  trial_name: string;
  trial_uri: string;
  task_id: { path: string };
  source: string | null;
  task_checksum: string;
  config: HarborTrialConfig;
  agent_info: { name: string; version: string; model_info: { name: string; provider: string | null } | null };
  agent_result: HarborAgentContext | null;
  verifier_result: HarborVerifierResult | null;
  verifier_environment_mode: 'shared' | 'separate' | null;
  exception_info: HarborException | null;
  started_at: string | null;
  finished_at: string | null;
  environment_setup: HarborTiming | null;
  agent_setup: HarborTiming | null;
  agent_execution: HarborTiming | null;
  verifier: HarborTiming | null;
  step_results: HarborStepResult[] | null;
  berth: BerthTrialKeys;
}

export interface HarborEvalStats {
  n_trials: number;
  n_errors: number;
  metrics: Array<Record<string, number | null>>;
  pass_at_k: Record<string, number>;
  reward_stats: Record<string, Record<string, string[]>>;
  exception_stats: Record<string, string[]>;
}

export interface HarborJobResult {
  id: string;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
  n_total_trials: number;
  stats: {
    n_completed_trials: number;
    n_errored_trials: number;
    n_running_trials: number;
    n_pending_trials: number;
    n_cancelled_trials: number;
    n_retries: number;
    evals: Record<string, HarborEvalStats>;
    n_input_tokens: number | null;
    n_cache_tokens: number | null;
    n_output_tokens: number | null;
    cost_usd: number | null;
  };
  trial_results: [];
  berth: { batch_id: string; reported_trials: string[]; earlier_attempts: string[]; failed_episodes: number; mean_reward: number | null; skipped_tasks: number };
}

export interface HarborJobConfig {
  job_name: string;
  jobs_dir: string;
  n_attempts: number;
  n_concurrent_trials: number;
  agents: Array<{ name: string; model_name: string | null; kwargs: Record<string, string> }>;
  datasets: Array<{ path: string }>;
  berth: { batch_id: string; dataset: string | null; agent: string | null };
}
