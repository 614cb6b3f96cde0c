// A rollout run for a trainer (issue 41): what it is asked to do, what it delivers, and the policy it runs under.
// Plain data only: the run workflow, `berth serve` and the clients share these shapes.
import type { PolicyEndpoint, RowTraining, RunPolicy, TokenRecord, TokenRollout } from '../tokens/index.ts';

export type { EpisodeTraining, PolicyEndpoint, RowTraining } from '../tokens/index.ts';

/** What a run does with a masked sample (docs/training.md, Groups and failures). */
export type GroupPolicy =
  | { kind: 'mask' }
  | { kind: 'retry'; maxRetries: number }
  | { kind: 'partial' };

/** Sampling settings sent with every policy call (OpenAI Chat Completions names). */
export type Sampling = Record<string, unknown>;

/** What the run's policy query answers the gateways: the token half's RunPolicy, with its change counter. */
export type GatewayPolicyState = RunPolicy & { seq: number };

/** The run's policy: whole-number version (only goes up), endpoint, sampling, drain; `seq` bumps on every change. */
export interface PolicyState {
  version: number;
  endpoint: PolicyEndpoint;
  sampling: Sampling;
  draining: boolean;
  seq: number;
}

/** One task of a run, as the client loaded it (digest pinned when the run started). */
export interface RunTask {
  taskId: string;
  taskPath: string;
  digest: string;
  baseImageId?: string;
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
  /**
   * The episode's token records as a path on the host that ran it (the linked sequences are token-rollout.json beside
   * it), or null. From another machine, ask for the tokens inline (`groups?tokens=1`): the fields below.
   */
  tokens: string | null;
  /** The version the sample's first model call was sent under (else the version it started under). */
  policy_version: number | null;
  training?: RowTraining;
  /** Inline tokens (asked for): every policy call's record in order, or null when the sample has none. */
  token_records?: TokenRecord[] | null;
  /** Inline tokens (asked for): the calls linked into sequences with loss masks, or null. */
  token_rollout?: TokenRolloutFile | null;
  /** Inline tokens (asked for): why they could not be read (neither on the serving machine nor in the results store). */
  tokens_error?: string;
}

/** token-rollout.json beside an episode's logs: its calls linked into token sequences with loss masks. */
export type TokenRolloutFile = TokenRollout & { schema_version: number; rollout_id: string | null; calls: number };

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
  /** Nothing more will be delivered: no group open, nothing queued or running (a keep_open run: only once closed). */
  complete: boolean;
}
