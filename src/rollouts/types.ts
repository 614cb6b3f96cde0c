// A rollout run for a trainer (issue 41): what it is asked to do, what it delivers, and the policy it runs under.
// Plain data only: the run workflow, `berth serve` and the clients share these shapes.

/** What a run does with a masked sample (docs/training.md, Groups and failures). */
export type GroupPolicy =
  | { kind: 'mask' }
  | { kind: 'retry'; maxRetries: number }
  | { kind: 'partial' };

/** The policy the trainer serves: which endpoint, which weights (version), and whether calls are held. */
export interface PolicyState {
  endpoint: string;
  model: string;
  version: number;
  /** New model calls wait at the gateway until resume (weights are being swapped). */
  draining: boolean;
  /** Bumped by every change, so a watcher knows it saw the newest. */
  seq: number;
}

/** Sampling settings sent with every policy call (OpenAI Chat Completions names). */
export type Sampling = Record<string, unknown>;

/** One task of a run, as the client loaded it (digest pinned when the run started). */
export interface RunTask {
  taskId: string;
  taskPath: string;
  digest: string;
  baseImageId?: string;
}

/** Training settings an episode of a run carries (EpisodeInput.training). */
export interface EpisodeTraining {
  runWorkflowId: string;
  endpoint: string;
  model: string;
  version: number;
  sampling: Sampling;
}

/** What the token half writes on an episode's row (ResultRow.training): small, the token arrays stay in a file. */
export interface RowTraining {
  /** The token records file beside the episode's logs, or null when none were captured. */
  tokens: string | null;
  calls: number;
  first_version: number | null;
  last_version: number | null;
  exact: boolean;
  refusal?: string;
}

/** One sample of a group as delivered: a scored row, or a placeholder for a masked sample (valid false). */
export interface SampleRow {
  task_id: string;
  group: number;
  sample: number;
  attempt: number;
  valid: boolean;
  reward: number | null;
  mask_sample: boolean;
  failure_kind: string | null;
  failure_reason: string | null;
  workflow_id: string | null;
  logs_dir: string | null;
  /** The token records file (absolute path), or null. */
  tokens: string | null;
  policy_version: number | null;
  training?: RowTraining;
}

/** A complete group: n rows, delivered once under its sequence number. */
export interface Group {
  seq: number;
  group: number;
  task_id: string;
  /** A masked sample masked the whole group (policy `mask`, or `retry` out of attempts). */
  masked: boolean;
  rows: SampleRow[];
}

export interface RunCounters {
  started: number;
  scored: number;
  masked: number;
  retried: number;
  stale: number;
  groupsDelivered: number;
}

export interface RunStatus {
  runId: string;
  state: 'running' | 'cancelled' | 'done';
  policy: PolicyState;
  groupsTotal: number;
  groupsOpen: number;
  /** Delivered and not yet acknowledged. */
  groupsWaiting: number;
  acked: number;
  lastSeq: number;
  running: number;
  queued: number;
  counters: RunCounters;
  keepOpen: boolean;
}
