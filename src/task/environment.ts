// An [environment] table (or [verifier.environment], a step's [steps.verifier.environment]) as its effective value:
// aliases applied to docker_image, resources scaled by resource_multiplier, rounded up (Task Folder Format
// § [gym.defaults]; a step's verifier environment is not scaled: docs/design.md section 7 "Effective values"), then the operator's
// override (berth.toml [resources]) in place of each value it names.
import type { BuildContext } from './build-context.ts';
import { applyImageAlias } from './image-alias.ts';
import type { Environment } from './model.ts';
import { policyAt } from './network.ts';
import type { EnvironmentToml } from './schema.ts';

function scaleResource(v: number | undefined, m: number): number | null {
  if (v === undefined) return null;
  return m === 1 ? v : Math.ceil(v * m);
}

/** `key` names the table in refusals (`environment`, `verifier.environment`, a step's); `scaled` false for a step's. */
export function toEnvironment(
  e: EnvironmentToml, ctx: Pick<BuildContext, 'defaults' | 'imageAliases' | 'resourceOverride'>, key = 'environment', scaled = true,
): Environment {
  const net = policyAt(e, true, key);
  const resource = scaled ? ctx.defaults.resource_multiplier : 1;
  const aliases = ctx.imageAliases;
  const override = ctx.resourceOverride ?? {};
  return {
    docker_image: e.docker_image !== undefined ? applyImageAlias(e.docker_image, aliases) : null,
    build_timeout_sec: e.build_timeout_sec,
    os: 'linux',
    cpus: override.cpus ?? scaleResource(e.cpus, resource),
    memory_mb: override.memory_mb ?? scaleResource(e.memory_mb, resource),
    storage_mb: scaleResource(e.storage_mb, resource),
    gpus: e.gpus ?? null,
    gpu_types: e.gpu_types ?? null,
    env: { ...e.env },
    workdir: e.workdir ?? null,
    skills_dir: e.skills_dir ?? null,
    mcp_servers: e.mcp_servers.map((s) => ({
      name: s.name,
      transport: s.transport as 'sse' | 'streamable-http' | 'stdio',
      url: s.url ?? null,
      command: s.command ?? null,
      args: [...s.args],
    })),
    healthcheck: e.healthcheck ? { ...e.healthcheck } : null,
    network_mode: net.network_mode,
    allowed_hosts: net.allowed_hosts,
  };
}
