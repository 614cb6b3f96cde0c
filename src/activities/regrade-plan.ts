import { ApplicationFailure } from '@temporalio/activity';
import { REGRADE_REFUSED } from '../outcomes/index.ts';
import type { RegradeInput } from './types.ts';
import type { EpisodePlan } from './types.ts';
import { typed } from './failures.ts';
import type { HostServices } from '../host/deps.ts';
import { planEpisode } from './shared.ts';

/**
 * The regrade's plan from the task as it is now: its tests/ may have changed since the batch started (that is the
 * point of a regrade), so the plan takes the current digest instead of refusing a moved one.
 */
export async function planRegrade(deps: HostServices, input: RegradeInput): Promise<EpisodePlan> {
  return typed(async () => {
    const task = await deps.loadEpisodeTask(input.episode, { fresh: true });
    if (task.multi_step) {
      throw ApplicationFailure.nonRetryable(
        `${task.path}: a multi-step task cannot be regraded: each step's verifier graded the state after its own step, and Berth keeps only the state after the last one. Retry the episode instead (berth retry BATCH --task ${task.id}).`,
        REGRADE_REFUSED);
    }
    return planEpisode(deps, { ...input.episode, digest: task.digest });
  });
}
