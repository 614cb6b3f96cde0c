// Installed agents' layers (DESIGN.md section 7, Agents and keys): the seed starts an installed agent's episode
// from its layer, and says so when this host has none yet; installing is then an activity of its own, so an
// episode on a host that has the layer shows no install at all.
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { AgentInstallFailed, ensureLayer, installedAgent, layerExists, layerTag, imageId, type LayerResult } from '../agents/index.ts';
import { ImageBuildFailed, type SandboxProvider, type PreparedImage } from '../sandbox/index.ts';
import { homePath } from '../config/paths.ts';
import type { EpisodeInput, EpisodePlan } from './types.ts';
import { typed } from './failures.ts';
import { agentImageForSeed } from './image-prep.ts';
import type { ActivityDeps } from './deps.ts';

export const LAYER_MISSING = 'berth:agent_layer_missing';

export const agentPackagesDir = (): string => homePath('agent-packages');

/**
 * The image an episode's sandbox starts from: the task's, or for an installed agent its layer over it (same
 * configuration on record: the layer only adds files and labels).
 */
export async function episodeImage(provider: SandboxProvider, prepared: PreparedImage, agentName: string | undefined): Promise<PreparedImage> {
  const agent = agentName ? installedAgent(agentName) : undefined;
  if (!agent) return prepared;
  const tag = layerTag(await imageId(provider, prepared.ref), agent);
  if (!(await layerExists(provider, tag))) {
    throw ApplicationFailure.nonRetryable(`${agent.name} ${agent.version} is not installed over ${prepared.name} on this host yet (${tag})`, LAYER_MISSING);
  }
  return { ...prepared, ref: tag };
}

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

/** Host queue: installs the episode's agent into a layer over its task's image. */
export async function installAgentLayer(deps: ActivityDeps, req: { input: EpisodeInput; plan: EpisodePlan }): Promise<LayerResult> {
  const timer = setInterval(() => heartbeat({ installing: req.input.agent }), 5000);
  try {
    return await typed(async () => {
      try {
        const image = await agentImageForSeed(deps.provider, await deps.loadEpisodeTask(req.input), req.input.imageAliases, req.input.baseImageId);
        return await buildLayerFor(deps.provider, image.ref, req.input.agent);
      } catch (err) {
        if (err instanceof AgentInstallFailed) throw ApplicationFailure.nonRetryable(err.message, 'agent:install_failed');
        throw err;
      }
    });
  } finally {
    clearInterval(timer);
  }
}
