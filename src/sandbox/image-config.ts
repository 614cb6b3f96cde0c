// The one reader of an image's configuration (docs/design.md section 6: one home for each rule). Everything Berth
// takes from an image (its id, USER, WORKDIR, ENV, ENTRYPOINT, CMD, HEALTHCHECK) comes through here.
import { shellQuote } from './names.ts';
import type { HealthcheckSpec } from './types.ts';

export interface ImageConfig {
  /** The image id (`sha256:…`): what a reference that may move is pinned to. */
  id: string;
  user: string | null;
  workdir: string | null;
  /** Config.Env as a map, in the image's order. */
  env: Record<string, string>;
  entrypoint: string[] | null;
  cmd: string[] | null;
  healthcheck: HealthcheckSpec | null;
}

export interface DockerHealthcheck {
  Test?: string[];
  Interval?: number;
  Timeout?: number;
  StartPeriod?: number;
  StartInterval?: number;
  Retries?: number;
}

/** An image's run configuration as engines and registries spell it (Docker's inspect `Config`, the OCI config blob's `config`). */
export interface EngineImageConfig {
  User?: string;
  WorkingDir?: string;
  Env?: string[] | null;
  Entrypoint?: string | string[] | null;
  Cmd?: string | string[] | null;
  Healthcheck?: DockerHealthcheck | null;
}

const list = (v: string | string[] | null | undefined): string[] | null => (v == null ? null : Array.isArray(v) ? v : [v]);

/** The one mapping of an engine's or registry's configuration to ImageConfig; `id` is the config's digest. */
export function imageConfigOf(id: string, c: EngineImageConfig | null | undefined): ImageConfig {
  return {
    id,
    user: c?.User || null,
    workdir: c?.WorkingDir || null,
    env: envMap(c?.Env),
    entrypoint: list(c?.Entrypoint),
    cmd: list(c?.Cmd),
    healthcheck: healthcheckFromImage(c?.Healthcheck),
  };
}

const NS_PER_SEC = 1e9;

/** Docker's HEALTHCHECK (durations in ns, 0 = Docker's default) as a sandbox healthcheck, or null for none / NONE. */
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

/**
 * The command Berth starts for an image's ENTRYPOINT: the entrypoint with `sh -c "sleep infinity"` in place of
 * the image's CMD, so the CMD never runs (Task Folder Verifiers § Image entrypoint). Null when there is none.
 */
export function keepAliveEntrypoint(entrypoint: readonly string[] | string | null | undefined): string[] | null {
  const list = entrypoint == null ? [] : typeof entrypoint === 'string' ? [entrypoint] : [...entrypoint];
  return list.length > 0 ? [...list, 'sh', '-c', 'sleep infinity'] : null;
}

export function envMap(list: readonly string[] | null | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kv of list ?? []) {
    const at = kv.indexOf('=');
    if (at > 0) env[kv.slice(0, at)] = kv.slice(at + 1);
    else if (at < 0 && kv !== '') env[kv] = '';
  }
  return env;
}
