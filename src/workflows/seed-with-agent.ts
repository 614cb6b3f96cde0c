import type { EpisodeInput, EpisodePlan, HostLease } from './types.ts';

/**
 * Whether an episode (of patch episode-v4) seeds and runs its first agent in one activity (seedThenAgentTurn): a
 * single-step episode with no step setup, of an agent that runs in an activity (not the openai child workflow), on a
 * host whose sandbox queue is its own (a cluster's shared queue moves files between workers per activity:
 * src/activities/files-home.ts).
 */
export function seedsWithAgent(input: Pick<EpisodeInput, 'agent'>, plan: Pick<EpisodePlan, 'steps'>, lease: HostLease): boolean {
  return plan.steps.length === 1 && plan.steps[0]!.setupSec === undefined && input.agent !== 'openai' && lease.filesQueue === undefined;
}
