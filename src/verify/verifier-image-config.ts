// A separate verifier image Berth built has its configuration on record, so its ENTRYPOINT and HEALTHCHECK run
// before test.sh (task-folder-verifiers.md § Shared and separate verification, § Image entrypoint): the entrypoint
// with `sh -c "sleep infinity"` in place of its CMD, beside the sandbox's keep-alive.
import type Docker from 'dockerode';
import { shellQuote, type HealthcheckSpec } from '../sandbox/index.ts';

export interface ImageRuntimeConfig {
  entrypoint: string[] | null;
  healthcheck: HealthcheckSpec | null;
  /** Names of the variables the image's ENV sets. */
  envNames: string[];
}

/** CPU-count hints a sandbox with a CPU limit gets (task-folder-verifiers.md § Environment variables and secrets). */
export const CPU_HINT_VARIABLES = ['OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'NUMEXPR_NUM_THREADS'] as const;

/** The hints for `cpus`, minus any variable the image on record sets (those win, as the task's own do). */
export function cpuHints(cpus: number | null, imageEnvNames: readonly string[] = []): Record<string, string> {
  if (!cpus || cpus <= 0) return {};
  const n = String(Math.max(1, Math.ceil(cpus)));
  return Object.fromEntries(CPU_HINT_VARIABLES.filter((v) => !imageEnvNames.includes(v)).map((v) => [v, n]));
}

interface DockerHealthcheck {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  StartPeriod?: number;
  StartInterval?: number;
  Retries?: number;
}

const NS_PER_SEC = 1e9;

/** Docker's HEALTHCHECK (durations in ns, 0 = default) as the sandbox's spec, or null for none / NONE. */
export function healthcheckFromImage(hc: DockerHealthcheck | null | undefined): HealthcheckSpec | null {
  const test = hc?.Test ?? [];
  let command: string;
  if (test[0] === 'CMD-SHELL' && test[1]) command = test[1];
  else if (test[0] === 'CMD' && test.length > 1) command = test.slice(1).map(shellQuote).join(' ');
  else return null;
  const sec = (ns: number | undefined, dflt: number) => (ns && ns > 0 ? ns / NS_PER_SEC : dflt);
  return {
    command,
    intervalSec: sec(hc?.Interval, 30),
    timeoutSec: sec(hc?.Timeout, 30),
    startPeriodSec: sec(hc?.StartPeriod, 0),
    startIntervalSec: sec(hc?.StartInterval, 5),
    retries: hc?.Retries && hc.Retries > 0 ? hc.Retries : 3,
  };
}

/** The command Berth starts for the image's ENTRYPOINT, or null when it has none. */
export function entrypointCommand(entrypoint: string[] | string | null | undefined): string[] | null {
  const list = entrypoint == null ? [] : Array.isArray(entrypoint) ? entrypoint : [entrypoint];
  return list.length > 0 ? [...list, 'sh', '-c', 'sleep infinity'] : null;
}

export async function imageRuntimeConfig(docker: Docker, ref: string): Promise<ImageRuntimeConfig> {
  const config = (await docker.getImage(ref).inspect()).Config as {
    Entrypoint?: string[] | string | null;
    Healthcheck?: DockerHealthcheck;
    Env?: string[] | null;
  };
  return {
    entrypoint: entrypointCommand(config.Entrypoint),
    healthcheck: healthcheckFromImage(config.Healthcheck),
    envNames: (config.Env ?? []).map((kv) => kv.split('=', 1)[0]!),
  };
}
