import { loadTask, type Task } from '../task/index.ts';
import type { EpisodeInput } from '../activities/types.ts';

const LOADED_MAX = 256;

/** The task as this episode sees it: the batch's aliases and dataset settings applied (effective values). */
export type EpisodeTaskLoader = (input: EpisodeInput, opts?: { fresh?: boolean }) => Promise<Task>;

/**
 * A loader with its own cache (one per worker's activities). A task read once at the episode's digest is kept (a
 * copy handed out each time), so seed, turns and verification do not read and hash the folder again. `fresh`
 * always reads the folder: planning must see a task that moved.
 */
export function episodeTaskLoader(): EpisodeTaskLoader {
  const loaded = new Map<string, Task>();
  return async (input, { fresh = false } = {}) => {
    const resourceOverride = input.episodeSettings?.resourceOverride;
    const separateVerifierForArtifacts = input.episodeSettings?.separateVerifierForArtifacts === true;
    const key = JSON.stringify([input.taskPath, input.datasetPath, input.imageAliases, input.digest, resourceOverride ?? null, separateVerifierForArtifacts]);
    const kept = fresh ? undefined : loaded.get(key);
    if (kept) return structuredClone(kept);
    const task = await loadTask(input.taskPath, {
      datasetRoot: input.datasetPath,
      imageAliases: input.imageAliases,
      resourceOverride,
      separateVerifierForArtifacts,
      // The batch checked [gym] allowed_agents when it started.
      allowUnsupportedPairing: true,
      logger: { warn: () => undefined },
    });
    if (task.digest === input.digest) {
      if (loaded.size >= LOADED_MAX) loaded.delete(loaded.keys().next().value!);
      loaded.set(key, structuredClone(task));
    }
    return task;
  };
}
