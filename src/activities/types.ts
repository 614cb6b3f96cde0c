// The activity contracts: what the workflows hand activities and what they answer (the workflows import these as
// types; docs/design.md section 2). Plain data, no imports with side effects.
import type { AgentName } from '../config/agents.ts';
import type { McpToolBinding } from '../agents/openai/mcp.ts';

export type { AgentName };
import type { ProbeResult as ModelProbeResult } from '../gateway/probe.ts';
import type { EpisodeTraining, PolicyProbe, RowTraining } from '../tokens/index.ts';

export type { EpisodeTraining, PolicyProbe, RowTraining };

/** The policy endpoint a rollout run's episodes will call, checked from a worker before the run starts. */
export interface PolicyProbeRequest {
  /** With or without /v1. */
  endpoint: string;
  model: string;
  /** The worker's environment variable holding the endpoint's key. */
  apiKeyVar?: string;
}
import type { BAD_AGENT_ARGS } from '../outcomes/index.ts';

/** The check before a batch: the agent's --agent-arg values (`agent:bad_args`, never a row's kind), then one model call. */
export type ProbeResult = ModelProbeResult | { ok: false; kind: typeof BAD_AGENT_ARGS; status: 0; reason: string };

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
  /** Training mode (berth serve): every model call goes to the trainer's policy and leaves token records. */
  training?: EpisodeTraining;
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
  /** `berth run --no-warm-pool`: no host seeds ahead for this batch, and its seeds never claim (absent: allowed). */
  warmPool?: false;
  /** berth.toml [results] store (s3://bucket/prefix): each attempt's host uploads its files there as it closes. */
  resultsStore?: string;
}

/** storeEpisodeFiles: the attempt whose logs folder its host uploads to the results store. */
export interface StoreEpisodeFilesRequest {
  /** s3://bucket[/prefix] of the batch's [results] store (never credentials: the host reads its own). */
  store: string;
  batchId: string;
  workflowId: string;
  runId: string;
}

/**
 * What the last verification does after tearing down, in episodes recorded with patch store-in-last-verify: tell the
 * batch its slot is free (signal episodeSlotFreed, so its window moves on during the upload), then upload the
 * attempt's files when they are small enough (storeInline).
 */
export interface AfterLastVerify {
  /** The batch's workflow id, when a batch started the episode. */
  slotFreedTo?: string;
  /** The attempt to upload to the batch's store. */
  store?: StoreEpisodeFilesRequest;
}

/** writeBatchJobFiles: a batch with a results store writes its job files there (src/client/batch-job-files.ts). */
export interface BatchJobFilesRequest {
  /** s3://bucket[/prefix] of the batch's [results] store (the worker reads its own endpoint and credentials). */
  store: string;
  batchId: string;
  /** The batch's end: every episode is waited for; else the episodes closed so far. */
  final: boolean;
  /**
   * Not final: how many episodes the batch has counted closed. The write waits a while for the listing (visibility
   * lags) to show at least as many closed, so an episode that just closed is in it. Absent in older batches.
   */
  closed?: number;
}

export interface BatchJobFilesWritten { rows: number; trials: number; files: number }

/**
 * The activity a `berth worker` registers on the shared queue beside createSharedActivities: its code is the client
 * library's (the job files `berth results` writes), which the activities layer does not import (src/cli/worker.ts).
 */
export interface BatchJobFilesActivity {
  writeBatchJobFiles(req: BatchJobFilesRequest): Promise<BatchJobFilesWritten>;
}

export interface StoredEpisodeFiles {
  /** The attempt's folder in the store (its manifest is `<key>/manifest.json`). */
  key: string;
  files: number;
  bytes: number;
  /** false when the host removed its copy after the upload ([results] keep_local = false). */
  keptLocal: boolean;
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
  /**
   * Where this worker's episode files are served, when its sandbox queue is shared by workers on several machines
   * (a cluster): a queue of this BERTH_HOME's own (docs/kubernetes.md, Episode files without shared storage).
   */
  filesQueue?: string;
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
  /**
   * The queue of the worker that seeded the sandbox, when the sandbox queue is shared by several machines: the
   * episode's files are gathered there, and its openai conversation lives there.
   */
  filesQueue?: string;
  /** Berth runs the image's entrypoint beside the keep-alive; its death during the rollout masks the episode. */
  entrypoint?: boolean;
  /** A Compose task's group: main is the sandbox above; every service (main too) by name. */
  group?: SandboxGroupRef;
  /** The seed claimed a sandbox this host's warm pool had seeded ahead (docs/performance-notes.md, The warm pool). */
  claimed?: true;
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
  /** Training mode: the episode's token records so far (the last turn's is the row's). */
  training?: RowTraining;
  /** What the rollout left that does not change the score, e.g. a sidecar that exited non-zero (its code, its log tail). */
  notes?: string[];
}

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
  /** The batch these tasks are prepared for, about to start: the host's warm pool seeds its first episodes ahead. */
  ahead?: PrepareAhead;
}

/** A batch as its first episodes will start (docs/performance-notes.md, The warm pool), before prepare pins base images. */
export interface PrepareAhead {
  /** The batch's first episode: its settings, which the pool's seeds share. */
  first: EpisodeInput;
  upcoming: UpcomingEpisodes['upcoming'];
  /**
   * Its first episodes in start order: a sandbox seeded ahead is made for one of them, carries its workflow label
   * (as its own seed's would) and is claimed by it alone.
   */
  episodes: Array<{ workflowId: string; taskId: string }>;
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
  /** Training mode: each model call goes through a training scope and appends to the episode's token records. */
  training?: { spec: EpisodeTraining; episodeDir: string; turn: number; rolloutId: string };
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
  /** Training mode: how long the call was held at the gateway by a drain; the turn's budget does not count it. */
  heldMs?: number;
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

/** What seedThenAgentTurn returns: the seeded sandbox, the first turn's agent, and the seed's own seconds. */
export interface SeededAgentTurn {
  sandbox: SandboxRef;
  agent: AgentTurnOutput;
  seedSec: number;
}

/** Among a seedThenAgentTurn failure's details when its agent part failed: the sandbox the seed had made. */
export interface SeededSandboxDetail {
  seededSandbox: SandboxRef;
}

/** Model usage as the gateway counted it. `promptTokens` includes cached input tokens. */
export interface TokenUsage { promptTokens: number; completionTokens: number; calls: number; cachedTokens?: number; costUsd?: number }

/** What a regrade carries (the regrade workflow's input, its activities' too). */
export interface RegradeInput {
  /** The new attempt (attempt k+1) of the episode; the plan records the task's digest as it is now. */
  episode: EpisodeInput;
  /** The attempt regraded: the row's `regraded_from`, and where its logs are. */
  from: {
    workflowId: string;
    runId: string;
    /** The sandbox queue of the host that ran it: its logs and kept state are there. */
    queue: string;
    host: string | null;
    logsDir: string;
    responseText: string;
    timings: Record<string, number>;
    usage?: TokenUsage;
    /**
     * The attempt's folder in the batch's results store (its row's `store_key`; the store is the episode's
     * `resultsStore`): read when its logs are not on the host that regrades it.
     */
    storeKey?: string;
  };
  /** The run whose final state was kept (the agent's run, also when a regrade is regraded). */
  stateOf: { workflowId: string; runId: string };
  /**
   * No worker polls the queue of the host that ran it, and its files are in the store: a live worker of the batch's
   * shared queue names its own host (hostLease), which reads the files from the store (patch regrade-from-store).
   */
  anyHost?: true;
}

/**
 * A bounded piece of a folder on the host that holds it, as a tar archive (Temporal payloads are limited to a few
 * MB): the one way files move from a host to whoever asks (docs/deployment.md, Moving files).
 */
export type { HostArchiveChunk } from '../config/transfer.ts';

export interface HostArchiveRequest {
  /** A folder under this host's BERTH_HOME/episodes (an episode's logs). */
  dir: string;
  offset: number;
  /** At most HOST_ARCHIVE_CHUNK_MAX bytes (src/config/transfer.ts). */
  length: number;
  /** The archive an earlier chunk came from (its sha256): later chunks are read from that one. */
  sha256?: string;
}

/** One chunk of an episode folder's archive sent to the worker that keeps the episode's files. */
export interface HostFilesPut {
  /** The episode's logs folder (under BERTH_HOME/episodes, the same path on every worker). */
  dir: string;
  offset: number;
  /** The whole archive's size and SHA-256: the last chunk unpacks it once all of it has arrived intact. */
  total: number;
  sha256: string;
  /** This chunk's bytes, base64. */
  data: string;
}


/**
 * What a batch answers its `upcoming` query with (src/config/batch-ids.ts): whether it is paused, and the episodes it
 * has not started yet, in the order it starts them, as runs of one task (at most a few runs ahead). A host's warm
 * pool seeds ahead from it.
 */
export interface UpcomingEpisodes {
  paused: boolean;
  upcoming: Array<{ taskId: string; taskPath: string; digest: string; baseImageId?: string; remaining: number }>;
}
