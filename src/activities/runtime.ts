import { DockerSandboxProvider, dockerFromEnv } from '../sandbox/index.ts';
import { DockerDriver } from '../sandbox/docker/driver.ts';
import { loadTask, type Task } from '../task/index.ts';
import type { EpisodeInput } from '../workflows/types.ts';

let provider: DockerSandboxProvider | undefined;
let driver: DockerDriver | undefined;

/** One provider per worker process: every host activity talks to this host's engine through it. */
export function sandboxProvider(): DockerSandboxProvider {
  if (!provider) provider = new DockerSandboxProvider(dockerFromEnv());
  return provider;
}

/** The driver under the provider (groups: Compose tasks), on the same engine connection. */
export function sandboxDriver(): DockerDriver {
  if (!driver) driver = new DockerDriver({ docker: sandboxProvider().docker });
  return driver;
}

const LOADED_MAX = 256;
const loaded = new Map<string, Task>();

/**
 * The task as this episode sees it: the batch's aliases and dataset settings applied (effective values). A task
 * read once at the episode's digest is kept (a copy handed out each time), so seed, turns and verification do not
 * read and hash the folder again. `fresh` always reads the folder: planning must see a task that moved.
 */
export async function loadEpisodeTask(input: EpisodeInput, { fresh = false } = {}): Promise<Task> {
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
}
