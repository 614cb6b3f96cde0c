// Plain data shared by workflows, activities and the client. No imports with side effects.
import type { McpToolBinding } from '../agents/openai/mcp.ts';

/** The agents Berth runs (the harnesses of src/agents; test/agents/pure.test.ts checks they agree). */
export const AGENT_NAMES = ['oracle', 'nop', 'command', 'openai', 'claude-code', 'codex', 'mini-swe-agent'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** Per episode, enforced by the worker's model gateway (--max-tokens, --max-cost). */
export interface ModelLimits {
  maxTokens?: number;
  maxCostUsd?: number;
}

export interface EpisodeInput {
  batchId: string;
  datasetName: string;
  datasetPath: string;
  taskId: string;
  taskPath: string;
  /** Digest recorded when the batch started; the plan refuses a task whose digest moved. */
  digest: string;
  /** A pull- or overlay-mode base as prepare pinned it (its image id): every host seeds from exactly this image. */
  baseImageId?: string;
  repeat: number;
  attempt: number;
  agent: AgentName;
  agentArgs: Record<string, string>;
  imageAliases: Record<string, string>;
  episodeSettings: EpisodeSettings;
  /** berth run --keep-final-state: the sandbox is committed to an image after the last agent turn (shared mode). */
  keepFinalState?: boolean;
  /** `provider/model` for agents that call a model (--model). */
  model?: string;
  limits?: ModelLimits;
}

/** berth.toml [episode] (and [resources]), as the client read it when the batch started. */
export interface EpisodeSettings {
  defaultTimeoutSec: number;
  enforceTaskTimeouts: boolean;
  sandboxReadyTimeoutSec: number;
  /** [resources]: replaces the task's effective cpus / memory_mb; absent when berth.toml names none. */
  resourceOverride?: { cpus?: number; memory_mb?: number };
  /** berth.toml [episode].separate_verifier_for_artifacts (unset in batches started before it). */
  separateVerifierForArtifacts?: boolean;
}

export const DEFAULT_EPISODE_SETTINGS: EpisodeSettings = { defaultTimeoutSec: 21600, enforceTaskTimeouts: true, sandboxReadyTimeoutSec: 900 };

export interface StepPlan {
  name: string;
  agentTimeoutSec: number;
  /** test.sh's budget. */
  verifierTimeoutSec: number;
  /** The verify activity's limit: collect hooks, a separate verifier's start, test.sh (absent in older plans). */
  verifyTimeoutSec?: number;
  /** Gate: a number gates `reward`, a table gates each named key. */
  minReward?: number | Record<string, number>;
  /** Set when the step has a workdir/ or a healthcheck to prepare before its agent: that preparation's budget. */
  setupSec?: number;
}

export interface EpisodePlan {
  taskId: string;
  digest: string;
  image: string;
  multiStep: boolean;
  steps: StepPlan[];
  strategy: 'mean' | 'final';
  verifierMode: 'shared' | 'separate';
  /** Seconds: the whole episode's budget, enforced by a workflow timer. */
  episodeBudgetSec: number;
  /** Seconds a seed may take (image preparation, overlay RUN lines, healthcheck). */
  seedTimeoutSec: number;
  /** Long host activities heartbeat; a silent host is lost after this many seconds. */
  heartbeatTimeoutSec: number;
  /** A host that does not pick up a sandbox activity within this many seconds is lost. */
  scheduleToStartSec: number;
}

export interface HostLease {
  host: string;
  queue: string;
}

export interface SandboxRef {
  /** The host's sandbox queue: every activity on this sandbox goes there. */
  queue: string;
  /** The sandbox's name on its host, and the engine's id for it. */
  name: string;
  id: string;
  host: string;
  /** The sandbox's resolved default user and working directory. */
  user: string;
  workdir: string;
  /** Per-episode logs folder on the host that owns the sandbox. */
  logsDir: string;
  /** Berth runs the image's entrypoint beside the keep-alive; its death during the rollout masks the episode. */
  entrypoint?: boolean;
  /** A Compose task's group: main is the sandbox above; every service (main too) by name. */
  group?: SandboxGroupRef;
}

/** One service of a group, as the sandbox's activities reach it. */
export interface ServiceRef {
  /** The service's sandbox name, and the engine's id for it. */
  name: string;
  id: string;
  user: string;
  workdir: string;
  /** Not running when the seed ended (a one-shot service that completed): never watched. */
  exited?: true;
}

export interface SandboxGroupRef {
  project: string;
  services: Record<string, ServiceRef>;
}

export interface TurnOutcome {
  step: string;
  reward: number | null;
  verifier_rewards: Record<string, number>;
  reward_components?: Record<string, number>;
  failure_kind: string | null;
  failure_reason: string | null;
  masked: boolean;
  response_text: string;
  timings: Record<string, number>;
  usage?: TokenUsage;
}

export interface ResponseObject {
  output: Array<{ type: 'message'; role: 'assistant'; content: Array<{ type: 'output_text'; text: string }> }>;
}

/** DESIGN.md section 4: one row per episode in rollouts.jsonl. */
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
  /** The step the episode stopped early after (multi-step-tasks.md § Early stop), or null when every turn ran. */
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
}

export interface BatchInput {
  batchId: string;
  datasetName: string;
  datasetPath: string;
  tasks: Array<{ taskId: string; taskPath: string; digest: string; baseImageId?: string }>;
  repeats: number;
  concurrency: number;
  agent: AgentName;
  agentArgs: Record<string, string>;
  imageAliases: Record<string, string>;
  episodeSettings: EpisodeSettings;
  model?: string;
  limits?: ModelLimits;
  /** Children started per run before the batch continues as new (tests lower it). */
  continueAsNewAfter?: number;
  keepFinalState?: boolean;
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

export const episodeWorkflowId = (batchId: string, taskId: string, repeat: number, attempt = 1): string =>
  `berth/${batchId}/${taskId}/${repeat}${attempt > 1 ? `~a${attempt}` : ''}`;

export interface PrepareRequest {
  taskId: string;
  taskPath: string;
  datasetPath: string;
  digest: string;
  imageAliases: Record<string, string>;
  separateVerifierForArtifacts?: boolean;
}

export type PrepareOutcome =
  | { taskId: string; ok: true; image: string; mode: string; built: boolean; layer?: { tag: string; built: boolean }; baseImageId?: string }
  | { taskId: string; ok: false; reason: string };

export interface PrepareInput {
  datasetPath: string;
  tasks: Array<{ taskId: string; taskPath: string; digest: string }>;
  imageAliases: Record<string, string>;
  /** An installed agent whose layer is built for every task too (berth prepare --agent). */
  agent?: string;
  /** Tasks forced into separate verification need their verifier images too. */
  separateVerifierForArtifacts?: boolean;
}

/** One turn of an episode, as the turn activities see it. */
export interface TurnRef {
  input: EpisodeInput;
  plan: EpisodePlan;
  sandbox: SandboxRef;
  turn: number;
}

/** What the openai turn workflow carries: paths and settings, never the key or the conversation. */
export interface OpenAiTurnSetup {
  conversationPath: string;
  user: string;
  workdir: string;
  baseUrl: string;
  model: string;
  /** The NAME of the variable holding the key on the worker. */
  apiKeyEnv: string | null;
  maxCalls: number;
  maxTokens: number | null;
  toolTimeoutSec: number;
  /** The task's MCP servers' tools, offered beside bash (absent: none). */
  mcpTools?: McpToolBinding[];
}

/** One openai model call as history keeps it. */
export interface OpenAiModelAnswer {
  toolCallIds: string[];
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  costUsd?: number;
  /** The episode passed --max-tokens or --max-cost with this call. */
  limit?: { kind: string; reason: string };
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

export interface AgentTurnOutput {
  /** Bounded: the full text is in the turn's logs folder. */
  responseText: string;
  exitCode: number | null;
  timings: Record<string, number>;
  usage?: TokenUsage;
  /** The agent's own ending of the turn (context window, a token or cost limit): a failure kind and why. */
  agentOutcome?: { kind: string; reason: string };
}

/** Model usage as the gateway counted it. `promptTokens` includes cached input tokens. */
export interface TokenUsage { promptTokens: number; completionTokens: number; calls: number; cachedTokens?: number; costUsd?: number }
