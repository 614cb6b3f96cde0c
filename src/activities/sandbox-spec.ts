import type { SandboxLabels, SandboxSpec } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import type { PreparedImage } from './image-prep.ts';

/** Resolves `$VAR` and `${VAR}` in a Dockerfile ENV value against what is already set. */
export function expandDockerEnv(value: string, env: Readonly<Record<string, string>>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, a: string | undefined, b: string | undefined) => env[(a ?? b)!] ?? '');
}

/** The agent sandbox for a task: image settings first, the Dockerfile's (pull, overlay), then the task's. */
export function agentSandboxSpec(task: Task, prepared: PreparedImage, opts: {
  name: string; labels: SandboxLabels; taskEnv: Record<string, string>;
}): SandboxSpec {
  const plan = task.image;
  const dockerfileEnv: Record<string, string> = {};
  const base = { ...(prepared.config?.env ?? {}) };
  for (const [k, v] of Object.entries(plan.env)) {
    dockerfileEnv[k] = expandDockerEnv(v, { ...base, ...dockerfileEnv });
  }
  const env = { ...dockerfileEnv, ...opts.taskEnv };
  const user = task.agent.user ?? plan.user ?? undefined;
  const workdir = task.environment.workdir ?? plan.workdir ?? undefined;
  const spec: SandboxSpec = {
    name: opts.name,
    labels: opts.labels,
    image: prepared.image,
    env,
    workdir: workdir ?? undefined,
    user: user === undefined ? undefined : String(user),
    cpus: task.environment.cpus ?? undefined,
    memoryMb: task.environment.memory_mb ?? undefined,
    network: task.environment.network_mode === 'no-network' ? 'none' : 'bridge',
  };
  const entry = prepared.config?.entrypoint;
  if (entry && entry.length > 0) {
    spec.entrypoint = { command: [...entry, ...(prepared.config?.cmd ?? [])], env: opts.taskEnv };
  }
  if (plan.mode === 'overlay' && plan.runs.length > 0) {
    spec.overlay = {
      timeoutSec: task.environment.build_timeout_sec,
      runs: plan.runs.map((r) => ({
        command: r.command,
        env: Object.fromEntries(Object.entries(r.env).map(([k, v]) => [k, expandDockerEnv(v, { ...base, ...r.env })])),
        workdir: r.workdir ?? '/',
        user: r.user ?? 'root',
      })),
    };
  }
  const hc = task.environment.healthcheck;
  if (hc) {
    spec.healthcheck = {
      command: hc.command, intervalSec: hc.interval_sec, timeoutSec: hc.timeout_sec,
      startPeriodSec: hc.start_period_sec, startIntervalSec: hc.start_interval_sec, retries: hc.retries,
    };
  }
  return spec;
}
