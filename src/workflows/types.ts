// The workflows' inputs, results and progress, and (re-exported) the activity contracts they carry: the types the
// client starts and reads workflows with. Types only.
import type { EpisodeInput, OpenAiTurnSetup, RowTraining, TokenUsage, TurnOutcome } from '../activities/types.ts';

export type {
  AfterLastVerify, AgentName, AgentTurnOutput, BatchJobFilesActivity, BatchJobFilesRequest, BatchJobFilesWritten, EpisodeInput, EpisodeTraining, RowTraining, HostArchiveChunk, HostArchiveRequest, HostFilesPut, EpisodePlan, EpisodeSettings, HostLease, ModelLimits, OpenAiModelAnswer, OpenAiTurnSetup, PolicyProbe, PolicyProbeRequest, PrepareInput, PrepareOutcome, PrepareRequest, ProbeResult, RegradeInput, SandboxGroupRef, SandboxRef, SeededAgentTurn, SeededSandboxDetail, ServiceRef, StepPlan, StoredEpisodeFiles, TokenUsage, TurnOutcome, TurnRef, UpcomingEpisodes,
} from '../activities/types.ts';

export interface ResponseObject {
  output: Array<{ type: 'message'; role: 'assistant'; content: Array<{ type: 'output_text'; text: string }> }>;
}

/** docs/design.md section 4: one row per episode in rollouts.jsonl. */
export interface ResultRow {
  task_id: string;
  repeat: number;
  attempt: number;
  reward: number | null;
  verifier_rewards: Record<string, number>;
  reward_components?: Record<string, number>;
  failure_kind: string | null;
  failure_reason: string | null;
  mask_sample: boolean;
  turns: Array<Pick<TurnOutcome, 'step' | 'reward' | 'verifier_rewards' | 'failure_kind' | 'usage'>>;
  /** The step the episode stopped early after (Multi-Step Harbor Tasks § Early stop), or null when every turn ran. */
  stopped_after_turn: string | null;
  response: ResponseObject;
  response_text: string;
  verifier_mode: 'shared' | 'separate' | null;
  digest: string;
  timings: Record<string, number>;
  workflow_id: string;
  run_id: string;
  host: string | null;
  logs_dir: string | null;
  /** Model token usage summed over the turns (LLM agents only). */
  usage?: TokenUsage;
  /** A regrade (verification run again without the agent) names the episode workflow it regraded. */
  regraded_from?: string;
  /** Training mode: where the episode's token records are (relative to logs_dir) and whether they are exact. */
  training?: RowTraining;
  /** The turns' notes, each once: what the rollout left that does not change the score (a sidecar that exited non-zero). */
  notes?: string[];
  /** [results] store: the attempt's folder in the store, once all its files and its manifest are there. */
  store_key?: string;
  /** [results] store: why the upload failed for good (the files stay on the host). */
  store_error?: string;
}

/** A batch: what every episode of it shares, its tasks, and how many repeats run how many at once. */
export interface BatchInput extends Pick<EpisodeInput,
  'batchId' | 'datasetName' | 'datasetPath' | 'agent' | 'agentArgs' | 'imageAliases' | 'episodeSettings' | 'model' | 'limits' | 'keepFinalState' | 'training'> {
  tasks: Array<{ taskId: string; taskPath: string; digest: string; baseImageId?: string }>;
  repeats: number;
  concurrency: number;
  /** Children started per run before the batch continues as new (tests lower it). */
  continueAsNewAfter?: number;
  /** With a results store: seconds of workflow time between the starts of two job-files writes while it runs (tests lower it). */
  jobFilesEverySec?: number;
}

export interface BatchProgress {
  total: number;
  done: number;
  running: number;
  scored: number;
  masked: number;
  failed: number;
  rewardSum: number;
  /** Live control (berth pause | resume | resize): set in the progress query's answer. */
  paused?: boolean;
  concurrency?: number;
}

export interface OpenAiTurnState {
  setup: OpenAiTurnSetup;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  costUsd?: number;
  /** Epoch ms when the turn started and when its budget runs out. */
  startedAt: number;
  deadline: number;
}
