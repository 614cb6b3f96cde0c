// The seed of a Compose task (docs/design.md section 7, Compose groups): main's image prepared as for a
// single sandbox, every sidecar's image built or aliased, then the group made and main seeded.
import { join } from 'node:path';
import { seedGroup } from '../sandbox/group-seed.ts';
import { prepareServiceImages } from '../sandbox/image-prep.ts';
import { groupProjectName, type SandboxLabels } from '../sandbox/index.ts';
import { composeInterpolationEnv, inTask, TASK_LAYOUT, type Task } from '../task/index.ts';
import type { EpisodeInput, SandboxRef, ServiceRef } from '../activities/types.ts';
import { taskImageForSeed } from './episode-image.ts';
import { environmentOf } from './seed-agent.ts';
import type { SandboxDriver } from '../sandbox/index.ts';
import { phaseTargets } from './handle.ts';
import { enterPhase, groupPhaseNetwork, type NetworkDeps } from './phase-network.ts';
import { agentSandboxSpec } from './sandbox-spec.ts';
import { deliverTaskExtras } from './task-extras.ts';

/** Multi-Step Harbor Tasks § Compose sidecar sizing: once per task, which sidecars run at the default size. */
/** What a Compose seed needs of the host: the engine and its egress, the driver its groups run on, the worker's log. */
export type ComposeSeedDeps = NetworkDeps & { driver: SandboxDriver; warnOnce(key: string, message: string): void };

function logDefaultSized(deps: ComposeSeedDeps, task: Task): void {
  const plain = task.compose!.sidecars.filter((s) => !s.sized).map((s) => s.name);
  if (plain.length === 0) return;
  deps.warnOnce(
    `sidecar sizes\0${task.path}\0${task.digest}`,
    `${task.id}: sidecar(s) ${plain.join(', ')} of ${task.compose!.file} run at the engine's default size (no deploy.resources). ` +
    'Size a sidecar with deploy.resources.limits (cpus, memory) in the compose file.',
  );
}

export async function seedComposeSandbox(deps: ComposeSeedDeps, task: Task, req: { input: EpisodeInput; workflowId: string; runId: string }, o: {
  host: string; queue: string; logsDir: string; labels: SandboxLabels; hostEnv: Readonly<Record<string, string | undefined>>;
}): Promise<SandboxRef> {
  const { provider, driver } = deps;
  const project = groupProjectName(req.workflowId, req.runId, 'agent');
  const taskEnv = environmentOf(task, o.hostEnv);
  let prepared = await taskImageForSeed(provider, task, req.input.imageAliases, req.input.baseImageId);
  // A Compose task's main runs its image's entrypoint and healthcheck even for a bare docker_image
  // (Task Folder Verifiers § Image entrypoint: "from the record prepare makes of every service image").
  if (!prepared.config) prepared = { ...prepared, config: await provider.images.config(prepared.ref) };
  // A group either keeps one network for the episode or has internal networks and switches its way out by phase.
  const phased = await groupPhaseNetwork(deps, task, req.input.agent);
  const network = { network: task.environment.network_mode === 'no-network' ? 'none' : 'bridge', env: phased?.mainEnv ?? {} };
  const spec = agentSandboxSpec(task, prepared, { name: project, taskEnv, labels: o.labels, network });
  logDefaultSized(deps, task);
  const r = await seedGroup(driver, spec, {
    project,
    composeFile: join(task.path, task.compose!.file),
    projectDir: inTask(task.path, TASK_LAYOUT.environmentDir),
    // As Harbor runs Compose: the worker's environment and the task's [environment].env for interpolation, under
    // Harbor's own variables.
    interpolationEnv: composeInterpolationEnv(task, prepared.ref, o.hostEnv, taskEnv),
    prepareImages: (resolved) => prepareServiceImages(provider, resolved, req.input.imageAliases),
    waitTimeoutSec: req.input.episodeSettings.sandboxReadyTimeoutSec,
    ...(phased ? { phases: phased.phases } : {}),
  });
  const services: Record<string, ServiceRef> = {};
  for (const [name, h] of Object.entries(r.group.services)) {
    const exited = name !== 'main' && r.group.stopped.includes(name);
    services[name] = { name: h.name, id: h.containerId, user: h.user, workdir: h.workdir, ...(exited ? { exited: true as const } : {}) };
  }
  const ref: SandboxRef = {
    queue: o.queue, name: r.main.name, id: r.main.containerId, host: o.host, user: r.main.user, workdir: r.main.workdir,
    logsDir: o.logsDir, ...(r.entrypoint ? { entrypoint: true } : {}), group: { project, services },
  };
  await enterPhase(deps, task, phaseTargets(ref), 0, 'baseline', req.input.agent);
  await deliverTaskExtras(provider, r.main, task);
  return ref;
}
