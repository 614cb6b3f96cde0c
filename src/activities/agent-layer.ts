// The seed starts an installed agent's episode from its layer, and says so when this host has none yet
// (LAYER_MISSING); installing is then this activity of its own, so an episode on a host that has the layer shows no
// install at all.
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { AgentInstallFailed, type LayerResult } from '../agents/index.ts';
import type { EpisodeInput, EpisodePlan } from './types.ts';
import { typed } from './failures.ts';
import { taskImageForSeed } from '../host/episode-image.ts';
import { buildLayerFor } from '../host/agent-layer.ts';
import type { HostServices } from '../host/deps.ts';

/** Host queue: installs the episode's agent into a layer over its task's image. */
export async function installAgentLayer(deps: HostServices, req: { input: EpisodeInput; plan: EpisodePlan }): Promise<LayerResult> {
  const timer = setInterval(() => heartbeat({ installing: req.input.agent }), 5000);
  try {
    return await typed(async () => {
      try {
        const image = await taskImageForSeed(deps.provider, await deps.loadEpisodeTask(req.input), req.input.imageAliases, req.input.baseImageId);
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
