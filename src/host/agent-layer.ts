// Installed agents' layers (docs/design.md section 7, Agents and keys): built once per (task image, agent, version) on
// this host, from the packages kept under BERTH_HOME.
import { AgentInstallFailed, ensureLayer, installedAgent, type LayerResult } from '../agents/index.ts';
import { ImageBuildFailed, type SandboxProvider } from '../sandbox/index.ts';
import { homePath } from '../config/paths.ts';

export const agentPackagesDir = (): string => homePath('agent-packages');

/** Builds the agent's layer over an image on this host (once per tag; concurrent callers share the build). */
export async function buildLayerFor(provider: SandboxProvider, baseRef: string, agentName: string): Promise<LayerResult> {
  const agent = installedAgent(agentName);
  if (!agent) throw new AgentInstallFailed(`"${agentName}" is not an installed agent`);
  try {
    return await ensureLayer(provider, agent, baseRef, agentPackagesDir(), homePath('tools'));
  } catch (err) {
    if (err instanceof ImageBuildFailed) throw new AgentInstallFailed(`installing ${agent.name} ${agent.version} over ${baseRef} failed: ${err.message}`);
    throw err;
  }
}
