import { groupProjectName } from '../sandbox/docker/group-names.ts';
import { containerName } from '../sandbox/index.ts';
import { groupRemovalName } from './seed-compose.ts';
import type { ActivityDeps } from './deps.ts';
import type { HostSlots } from './slots.ts';

/** The sandboxes an episode run may have on its host: its containers, and its Compose group (every container, network and volume of it). */
export const episodeSandboxNames = (episodeId: string, runId: string): string[] => [
  ...(['agent', 'verifier'] as const).map((role) => containerName(episodeId, runId, role)),
  groupRemovalName(groupProjectName(episodeId, runId, 'agent')),
];

/** Frees a slot once called; a failure to free it is left to the reconciler (src/activities/slot-reconcile.ts). */
export const freeing = (slots: HostSlots, key: string) => (): void => {
  slots.free(key).catch((err: Error) => console.warn(`berth worker: could not free the slot of ${key} (${err.message}); the reconciler frees it later`));
};

/** Hands the episode run's sandboxes to this host's remover; its slot is freed once they are gone. Idempotent. */
export async function tearDownEpisode(deps: Pick<ActivityDeps, 'slots' | 'remover'>, episodeId: string, runId: string): Promise<void> {
  const names = episodeSandboxNames(episodeId, runId);
  const { slots } = deps;
  const key = await slots.vacate(episodeId, runId, names);
  deps.remover.schedule(`${episodeId}/${runId}`, names, key ? freeing(slots, key) : undefined);
}
