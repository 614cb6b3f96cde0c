import { mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { containerName } from '../sandbox/index.ts';
import { templateEnv, type Task } from '../task/index.ts';
import type { EpisodeInput, EpisodePlan, SandboxRef } from '../workflows/types.ts';
import { typed } from './failures.ts';
import { hostIdentity } from './host-identity.ts';
import { prepareImage } from './image-prep.ts';
import { episodeLogsDir } from './logs.ts';
import { loadEpisodeTask, sandboxProvider } from './runtime.ts';
import { agentSandboxSpec } from './sandbox-spec.ts';
import { seedFailure } from './seed-failure.ts';
import { tearDownEpisode } from './tear-down.ts';
import { beating } from './beating.ts';

function environmentOf(task: Task): Record<string, string> {
  const result = templateEnv(task.environment.env, process.env);
  if ('missing' in result) throw seedFailure(`${task.path}/task.toml: [environment].env needs the variable ${result.missing}, which is not set on this worker. Set it in the worker's environment.`);
  return result.values;
}

/** Create-or-adopt the agent's sandbox: image ready, container started, overlay, entrypoint, healthcheck. */
export async function seed(req: { input: EpisodeInput; plan: EpisodePlan; workflowId: string; runId: string }): Promise<SandboxRef> {
  return typed(() => beating(async () => {
    const { host, queue } = await hostIdentity();
    const task = await loadEpisodeTask(req.input);
    const taskEnv = environmentOf(task);
    const provider = sandboxProvider();
    const prepared = await prepareImage(provider.docker, provider, task, req.input.imageAliases);
    const name = containerName(req.workflowId, req.runId, 'agent');
    const spec = agentSandboxSpec(task, prepared, {
      name, taskEnv, labels: { batch: req.input.batchId, workflowId: req.workflowId, role: 'agent' },
    });
    const { handle } = await provider.seed(spec);
    if (task.image.upload_environment_files && existsSync(join(task.path, 'environment'))) {
      await provider.upload(handle, join(task.path, 'environment'), handle.workdir, { owner: handle.user });
    }
    const logsDir = episodeLogsDir(req.workflowId, req.runId);
    mkdirSync(logsDir, { recursive: true });
    return {
      queue, container: handle.name, containerId: handle.containerId, host, user: handle.user, workdir: handle.workdir, logsDir,
      ...(spec.entrypoint ? { entrypoint: true } : {}),
    };
  }));
}

/**
 * Hands the episode's sandboxes to this worker's remover and returns at once: removal is off the
 * episode's critical path, and the episode's slot is freed only once they are gone. By name, so a
 * seed that finished after a cancellation, or a separate verifier's sandbox, goes too. Idempotent.
 *
 * If this worker dies before they are gone, the journal makes its next start remove them. The
 * janitor alone would not: at that start the episode is usually still RUNNING (closing it takes a
 * workflow task that only a live worker runs), and the janitor keeps a running episode's containers.
 */
export async function teardown(req: { episodeId: string; runId: string }): Promise<void> {
  tearDownEpisode(req.episodeId, req.runId);
}
