import { ApplicationFailure, heartbeat, sleep } from '@temporalio/activity';
import type { EpisodeInput, EpisodePlan, HostLease } from '../workflows/types.ts';
import { hostIdentity } from './host-identity.ts';
import { liteDigest, readLiteTask } from './task-lite.ts';
import { workerSlots } from './worker-state.ts';

export async function planEpisode(input: EpisodeInput): Promise<EpisodePlan> {
  const digest = liteDigest(input.taskPath);
  if (digest !== input.digest) {
    throw ApplicationFailure.nonRetryable(
      `Task ${input.taskId} at ${input.taskPath} changed since batch ${input.batchId} started (digest ${input.digest} → ${digest}). Start a new batch to run the edited task.`,
      'berth:digest_moved');
  }
  const task = readLiteTask(input.taskPath);
  return {
    taskId: input.taskId,
    digest,
    image: input.imageAliases[task.image] ?? task.image,
    multiStep: false,
    steps: [{ name: 'main', agentTimeoutSec: task.agentTimeoutSec, verifierTimeoutSec: task.verifierTimeoutSec }],
    strategy: 'final',
    verifierMode: 'shared',
    episodeBudgetSec: task.agentTimeoutSec + task.verifierTimeoutSec + 900,
    seedTimeoutSec: 900,
    heartbeatTimeoutSec: Number(process.env.BERTH_HEARTBEAT_TIMEOUT_SEC ?? 45),
    scheduleToStartSec: Number(process.env.BERTH_SCHEDULE_TO_START_SEC ?? 300),
  };
}

/** Returns this host's queue once a sandbox slot is reserved for the episode. */
export async function pickHost(req: { episodeId: string }): Promise<HostLease> {
  const slots = workerSlots();
  while (!slots.tryReserve(req.episodeId)) {
    heartbeat({ waiting: slots.inUse });
    await sleep(500);
  }
  return hostIdentity();
}
