import { posix } from 'node:path';
import { withImageRuntime, type ImageConfig, type PreparedImage, type SandboxLabels, type SandboxSpec } from '../sandbox/index.ts';
import { resolveDockerfileEnv, type ResolvedDockerfileEnv, type Task } from '../task/index.ts';

/**
 * Docker's ENV for a pull- or overlay-mode Dockerfile, over its base image's environment on record
 * (Task Folder Format § Dockerfile modes). Null for prebuilt and build modes: a built image carries its own.
 */
function dockerfileEnv(task: Task, config: ImageConfig | null): ResolvedDockerfileEnv | null {
  const plan = task.image;
  if (plan.mode !== 'pull' && plan.mode !== 'overlay') return null;
  if (!config) throw new Error(`task ${task.id}: a ${plan.mode}-mode image has no configuration on record; prepare it first`);
  return resolveDockerfileEnv(plan.instructions, config.env);
}

/** A Dockerfile WORKDIR that stayed relative starts from the base image's working directory, as in a build. */
const fromBase = (dir: string, config: ImageConfig | null): string => posix.resolve(config?.workdir || '/', dir);

/**
 * The agent sandbox for a task: the image's configuration on record (ENV resolved as Docker resolves it,
 * entrypoint, healthcheck), then the Dockerfile's settings (pull, overlay), then the task's.
 */
export function agentSandboxSpec(task: Task, prepared: PreparedImage, opts: {
  name: string; labels: SandboxLabels; taskEnv: Record<string, string>;
  /** Where the sandbox starts and what its network phases need in its environment (phase-network.ts). */
  network: { network: SandboxSpec['network']; env: Record<string, string>; phases?: boolean };
}): SandboxSpec {
  const plan = task.image;
  const config = prepared.config;
  const resolved = dockerfileEnv(task, config);
  const user = task.agent.user ?? plan.user ?? (config ? config.user || 'root' : undefined);
  const workdir = task.environment.workdir ?? (plan.workdir !== null ? fromBase(plan.workdir, config) : config ? config.workdir || '/' : undefined);
  const spec = withImageRuntime({
    name: opts.name,
    labels: opts.labels,
    image: prepared.ref,
    env: { ...(resolved?.env ?? {}), ...opts.taskEnv, ...opts.network.env },
    workdir,
    user: user === undefined ? undefined : String(user),
    cpus: task.environment.cpus ?? undefined,
    memoryMb: task.environment.memory_mb ?? undefined,
    gpus: task.environment.gpus ?? undefined,
    network: opts.network.network,
    ...(opts.network.phases ? { networkPhases: true } : {}),
  }, { config, healthcheck: task.environment.healthcheck, entrypointEnv: opts.taskEnv, cpus: task.environment.cpus });
  if (plan.mode === 'overlay' && plan.runs.length > 0 && resolved) {
    // Each line runs with exactly the environment in effect at it: what the container has beyond that is unset.
    const containerKeys = [...Object.keys(spec.env), 'HOSTNAME'];
    spec.overlay = {
      timeoutSec: task.environment.build_timeout_sec,
      runs: plan.runs.map((r, i) => {
        const env = resolved.runs[i]!;
        return {
          command: r.command,
          env,
          unset: containerKeys.filter((k) => !(k in env)),
          workdir: r.workdir !== null ? fromBase(r.workdir, config) : config?.workdir || '/',
          user: r.user ?? (config?.user || 'root'),
        };
      }),
    };
  }
  return spec;
}
