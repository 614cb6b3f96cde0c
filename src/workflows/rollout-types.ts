// What starts a rollout run (src/workflows/rollout-run.ts); the client builds it.
import type { EpisodeInput } from './types.ts';
import type { GroupPolicy, PolicyEndpoint, RunTask, Sampling } from '../rollouts/types.ts';

/** The fields every episode of the run shares (EpisodeInput without the task, repeat, attempt and training). */
export type RunEpisodeBase = Pick<EpisodeInput, 'batchId' | 'datasetName' | 'datasetPath' | 'agent' | 'agentArgs' | 'imageAliases' | 'episodeSettings' | 'model'>;

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
