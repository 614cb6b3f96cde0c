// What starts a rollout run, and the names of its queries and updates (the workflow, `berth serve` and the clients).
import type { GroupPolicy, PolicyEndpoint, RunTask, Sampling } from './types.ts';

/** The fields every episode of the run shares (EpisodeInput without the task, repeat, attempt and training). */
export interface RunEpisodeBase {
  batchId: string;
  datasetName: string;
  datasetPath: string;
  agent: string;
  agentArgs: Record<string, string>;
  imageAliases: Record<string, string>;
  episodeSettings: {
    defaultTimeoutSec: number;
    enforceTaskTimeouts: boolean;
    sandboxReadyTimeoutSec: number;
    resourceOverride?: { cpus?: number; memory_mb?: number };
    separateVerifierForArtifacts?: boolean;
    warmPool?: false;
  };
  model?: string;
}

export interface RolloutRunInput {
  key: string;
  base: RunEpisodeBase;
  tasks: RunTask[];
  /** Samples per group (GRPO's group size). */
  n: number;
  groupPolicy: GroupPolicy;
  maxStaleness?: number | null;
  policy: { endpoint: PolicyEndpoint; version: number; sampling: Sampling };
  concurrency: number;
  /** The run stays open for add-work after every group is acknowledged, until `close` (async RL). */
  keepOpen?: boolean;
  /** Episodes started per workflow run before it continues as new (tests lower it). */
  continueAsNewAfter?: number;
}

export interface AddWork {
  tasks: RunTask[];
  n?: number;
}

export const RUN_QUERIES = { status: 'status', groups: 'groups' } as const;
export const RUN_UPDATES = {
  ack: 'ack', addWork: 'addWork', setPolicy: 'setPolicy', drain: 'drain', resume: 'resume', cancel: 'cancel', close: 'close',
} as const;
