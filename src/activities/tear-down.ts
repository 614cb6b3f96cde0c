import { containerName } from '../sandbox/index.ts';
import { workerRemover, workerSlots } from './worker-state.ts';

/** Hands the episode run's sandboxes to this worker's remover; its slot is freed once they are gone. Idempotent. */
export function tearDownEpisode(episodeId: string, runId: string): void {
  const names = (['agent', 'verifier'] as const).map((role) => containerName(episodeId, runId, role));
  workerRemover().schedule(`${episodeId}/${runId}`, names, workerSlots().vacate(episodeId));
}
