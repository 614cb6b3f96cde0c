import { DockerSandboxProvider, dockerFromEnv } from '../sandbox/index.ts';
import { loadTask, type Task } from '../task/index.ts';
import type { EpisodeInput } from '../workflows/types.ts';

let provider: DockerSandboxProvider | undefined;

/** One provider per worker process: every host activity talks to this host's engine through it. */
export function sandboxProvider(): DockerSandboxProvider {
  if (!provider) provider = new DockerSandboxProvider(dockerFromEnv());
  return provider;
}

/** The task as this episode sees it: the batch's aliases and dataset settings applied (effective values). */
export function loadEpisodeTask(input: EpisodeInput): Promise<Task> {
  return loadTask(input.taskPath, {
    datasetRoot: input.datasetPath,
    imageAliases: input.imageAliases,
    // The batch checked [gym] allowed_agents when it started.
    allowUnsupportedPairing: true,
    logger: { warn: () => undefined },
  });
}
