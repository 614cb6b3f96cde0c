// The agent's sandbox for one episode (docs/design.md section 3, seed): the image pinned at prepare, the sandbox spec
// from the task and the image's configuration on record, create-or-adopt. Plain I/O over a provider, so tests
// drive it on the real engine without an activity around it.
import { existsSync, mkdirSync } from 'node:fs';
import { SeedFailed, type SandboxHandle, type SandboxLabels, type SandboxProvider, type SandboxSpec } from '../sandbox/index.ts';
import { inTask, resolveTemplates, TASK_LAYOUT, unsetVariableMessage, type Task } from '../task/index.ts';
import { keepEntrypointOutput } from './entrypoint-output.ts';
import { episodeImage } from './episode-image.ts';
import { turnLogsDir } from './logs.ts';
import { agentSandboxNetwork, enterPhase, singleSandbox, type NetworkDeps } from './phase-network.ts';
import { agentSandboxSpec } from './sandbox-spec.ts';
import { deliverTaskExtras } from './task-extras.ts';

export interface AgentSeedRequest {
  name: string;
  labels: SandboxLabels;
  imageAliases: Readonly<Record<string, string>>;
  /** The base the batch's prepare pinned (pull and overlay modes), whichever host runs the episode. */
  baseImageId?: string;
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The episode's logs folder on this host: an entrypoint that fails at seed leaves its output there. */
  logsDir: string;
  /** Values never to write in clear (the worker's [secrets], [environment].env's resolved values); read only when output is kept. */
  hidden: () => readonly string[];
  /** An installed agent starts from its layer over the task's image (docs/agents.md). */
  agent?: string;
}

export function environmentOf(task: Task, hostEnv: AgentSeedRequest['hostEnv']): Record<string, string> {
  const result = resolveTemplates(task.environment.env, hostEnv);
  if (!result.ok) {
    throw new SeedFailed('harbor:seed_failed', `${task.path}/task.toml: ${unsetVariableMessage({ table: '[environment].env', key: result.key, variable: result.variable, secrets: false })}`);
  }
  return result.values;
}

/** The agent sandbox's spec for the task, from the image pinned at prepare: everything a seed does before the engine. */
export async function agentSeedSpec(deps: NetworkDeps, task: Task, req: Pick<AgentSeedRequest, 'name' | 'labels' | 'imageAliases' | 'baseImageId' | 'hostEnv' | 'agent'>): Promise<SandboxSpec> {
  const { provider } = deps;
  const taskEnv = environmentOf(task, req.hostEnv);
  const prepared = await episodeImage(provider, task, { aliases: req.imageAliases, ...(req.baseImageId !== undefined ? { baseImageId: req.baseImageId } : {}), ...(req.agent !== undefined ? { agent: req.agent } : {}) });
  const spec = agentSandboxSpec(task, prepared, { name: req.name, taskEnv, labels: req.labels, network: await agentSandboxNetwork(deps, task, req.agent) });
  // Before the entrypoint and any healthcheck (docs/design.md section 7, Images): a healthcheck may look for these files.
  const environmentDir = inTask(task.path, TASK_LAYOUT.environmentDir);
  if (task.image.upload_environment_files && existsSync(environmentDir)) {
    spec.uploadDirs = [...(spec.uploadDirs ?? []), { hostDir: environmentDir }];
  }
  return spec;
}

/**
 * Seeds `spec` on the engine (create-or-adopt), then the baseline network and the task's extras. `kept`: where a
 * failed entrypoint's output is kept (an episode's seed; a warm pool's has no episode to keep it for).
 */
export async function seedAgentFromSpec(deps: NetworkDeps, task: Task, spec: SandboxSpec, agent: string | undefined, kept?: Pick<AgentSeedRequest, 'logsDir' | 'hidden'>): Promise<SandboxHandle> {
  const { provider } = deps;
  let handle: SandboxHandle;
  try {
    ({ handle } = await provider.seed(spec));
  } catch (err) {
    if (kept && err instanceof SeedFailed && err.kind === 'harbor:entrypoint_failed') throw await withKeptOutput(provider, task, spec.name, err, kept);
    throw err;
  }
  await enterPhase(deps, task, singleSandbox(handle), 0, 'baseline', agent);
  await deliverTaskExtras(provider, handle, task);
  return handle;
}

export async function seedAgentSandbox(deps: NetworkDeps, task: Task, req: AgentSeedRequest): Promise<{ handle: SandboxHandle; spec: SandboxSpec }> {
  const spec = await agentSeedSpec(deps, task, req);
  return { handle: await seedAgentFromSpec(deps, task, spec, req.agent, req), spec };
}

/** The failed entrypoint's output, kept with the first turn's verifier logs; the reason names that file. */
async function withKeptOutput(provider: SandboxProvider, task: Task, name: string, err: SeedFailed, req: Pick<AgentSeedRequest, 'logsDir' | 'hidden'>): Promise<SeedFailed> {
  const turnDir = turnLogsDir(req.logsDir, 0, task.multi_step ? task.steps[0]!.name : null);
  mkdirSync(turnDir, { recursive: true });
  const kept = await keepEntrypointOutput(provider, await provider.attach(name), turnDir, req.hidden()).catch(() => null);
  return kept ? new SeedFailed(err.kind, `${err.message}\nThe whole output is kept in ${kept}`, err.output) : err;
}
