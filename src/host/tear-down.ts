import { containerName, groupProjectName } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import { turnVerifier } from '../verify/index.ts';
import { groupRemovalName, type Remover } from './remover.ts';
import type { SandboxSlots } from './sandbox-slots.ts';

/** Which of an episode's possible sandboxes it may have made. Without the task (a teardown by name only), all of them. */
export interface EpisodeSandboxKinds {
  /** One agent container (a task without a compose file). */
  single: boolean;
  /** A Compose task's group: every container, network and volume of it. */
  group: boolean;
  /** Some turn verifies in a separate sandbox of its own. */
  separateVerifier: boolean;
}

const EVERY_KIND: EpisodeSandboxKinds = { single: true, group: true, separateVerifier: true };

/**
 * What a task's episode can make: its group or agent container, and a separate verifier's container when some turn
 * verifies separately. Removing only these spares each episode the group listings (containers twice, networks,
 * volumes) and a removal of a container that was never made.
 */
export function sandboxKindsOf(task: Task): EpisodeSandboxKinds {
  const turns = task.multi_step ? task.steps.map((_, i) => i) : [null];
  return { single: !task.compose, group: Boolean(task.compose), separateVerifier: turns.some((i) => turnVerifier(task, i).mode === 'separate') };
}

/** The sandboxes an episode run may have on its host: its containers, and its Compose group (every container, network and volume of it). */
export const episodeSandboxNames = (episodeId: string, runId: string, kinds: EpisodeSandboxKinds = EVERY_KIND): string[] => [
  ...(kinds.single ? [containerName(episodeId, runId, 'agent')] : []),
  ...(kinds.group ? [groupRemovalName(groupProjectName(episodeId, runId, 'agent'))] : []),
  ...(kinds.separateVerifier ? [containerName(episodeId, runId, 'verifier')] : []),
];

/** Frees a slot once called; a failure to free it is left to the reconciler (src/host/slot-reconcile.ts). */
export const freeing = (slots: SandboxSlots, key: string) => (): void => {
  slots.free(key).catch((err: Error) => console.warn(`berth worker: could not free the slot of ${key} (${err.message}); the reconciler frees it later`));
};

/** Hands the episode run's sandboxes to this host's remover; its slot is freed once they are gone. Idempotent. */
export async function tearDownEpisode(deps: { slots: SandboxSlots; remover: Remover }, episodeId: string, runId: string, kinds?: EpisodeSandboxKinds): Promise<void> {
  const names = episodeSandboxNames(episodeId, runId, kinds);
  const { slots } = deps;
  const key = await slots.vacate(episodeId, runId, names);
  deps.remover.schedule(`${episodeId}/${runId}`, names, key ? freeing(slots, key) : undefined);
}
