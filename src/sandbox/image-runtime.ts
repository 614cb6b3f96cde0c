// What an image's configuration on record adds to any sandbox started from it, agent's or separate verifier's
// (Task Folder Verifiers § Image entrypoint; docs/design.md section 7, Images): its ENTRYPOINT with
// `sh -c "sleep infinity"` in place of its CMD, its HEALTHCHECK awaited before the task's own, and CPU-count hints
// for the variables neither the task nor the image sets.
import type { Healthcheck } from '../task/index.ts';
import { cpuHints } from './cpu-hints.ts';
import { keepAliveEntrypoint, type ImageConfig } from './image-config.ts';
import type { HealthcheckSpec, SandboxSpec } from './types.ts';

/** A task table's healthcheck (`[environment.healthcheck]`, `[verifier.environment.healthcheck]`) for the sandbox. */
export function taskHealthcheck(hc: Healthcheck | null): HealthcheckSpec | null {
  if (!hc) return null;
  return {
    command: hc.command, intervalSec: hc.interval_sec, timeoutSec: hc.timeout_sec,
    startPeriodSec: hc.start_period_sec, startIntervalSec: hc.start_interval_sec, retries: hc.retries,
  };
}

export interface ImageRuntimeInput {
  /** The image's configuration when on record; null for a prebuilt image (no entrypoint, no image healthcheck). */
  config: ImageConfig | null;
  /** The task's own healthcheck, awaited after the image's. */
  healthcheck: Healthcheck | null;
  /** Extra variables the entrypoint process gets (the task's env table). */
  entrypointEnv: Record<string, string>;
  cpus: number | null;
}

/** `spec` with the entrypoint, healthchecks and CPU hints its image and task call for. */
export function withImageRuntime(spec: SandboxSpec, o: ImageRuntimeInput): SandboxSpec {
  const out: SandboxSpec = { ...spec };
  const command = keepAliveEntrypoint(o.config?.entrypoint);
  if (command) out.entrypoint = { command, env: o.entrypointEnv };
  const healthchecks = [o.config?.healthcheck ?? null, taskHealthcheck(o.healthcheck)].filter((h): h is HealthcheckSpec => h !== null);
  if (healthchecks.length > 0) out.healthchecks = healthchecks;
  out.env = { ...cpuHints(o.cpus, [...Object.keys(spec.env), ...Object.keys(o.config?.env ?? {})]), ...spec.env };
  return out;
}
