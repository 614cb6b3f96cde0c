import type { EpisodeInput, EpisodePlan, HostLease } from './types.ts';

/**
 * Whether an episode (of patch episode-v4) seeds and runs its first agent in one activity (seedThenAgentTurn): a
 * single-step episode with no step setup, of an agent that runs in an activity (not the openai child workflow). On a
 * host whose sandbox queue several workers share (a cluster: `lease.filesQueue`), only where `onSharedQueue` says so
 * (patch cluster-seed-with-agent; before it, the seed and the agent were two activities there): the worker that seeds
 * keeps the episode's files (src/activities/files-home.ts), so its agent runs beside them, and a retried attempt on
 * another worker adopts the seeded pod and becomes the keeper.
 */
export function seedsWithAgent(
  input: Pick<EpisodeInput, 'agent'>, plan: Pick<EpisodePlan, 'steps'>, lease: HostLease, onSharedQueue: () => boolean = () => false,
): boolean {
  if (plan.steps.length !== 1 || plan.steps[0]!.setupSec !== undefined || input.agent === 'openai') return false;
  return lease.filesQueue === undefined || onSharedQueue();
}
