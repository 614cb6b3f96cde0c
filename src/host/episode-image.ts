// Which image an episode's sandbox starts from, answered here only: the image prepare recorded on this host (or the
// base the batch pinned), and for an installed agent its layer over it. A refusal is a typed error
// (SeedFailed, AgentLayerMissing); src/activities/failures.ts makes it the failure the workflow branches on.
import { installedAgent, layerExists, layerTag, imageId } from '../agents/index.ts';
import { pinnedAgentImage, prepareAgentImage, SeedFailed, type PreparedImage, type SandboxProvider } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import { AgentLayerMissing } from './errors.ts';
import { readRecord, writeRecord, type Aliases } from './image-prep.ts';

/**
 * The base the batch's prepare pinned, on whichever host the episode runs: this host's tag may name another image
 * (or none), and the episode still starts from the pinned one, or fails its seed saying how to get it here.
 */
async function batchPinnedBase(provider: SandboxProvider, task: Task, aliases: Aliases, id: string): Promise<PreparedImage> {
  const name = task.image.image!;
  const config = await provider.images.config(id);
  if (config) return pinnedAgentImage(provider, task, name, config, false);
  const here = await provider.images.config(name);
  throw new SeedFailed(
    'harbor:seed_failed',
    `the base image ${name} was pinned when the batch was prepared to ${id}, which this host does not have ` +
    `(${here ? `its ${name} is ${here.id}` : `it has no ${name}`}); give every host the same image ` +
    `(docker save ${name} | docker -H <this host> load), then retry the episode (berth retry --masked)`,
  );
}

/**
 * Seed: the agent image prepare recorded on this host, by its id. Without a record (another host prepared the
 * batch) it is prepared and recorded now. A pinned base that is gone fails the seed rather than start from
 * whatever the tag names today; a built image that is gone is built again (its tag is its content hash).
 */
export async function taskImageForSeed(provider: SandboxProvider, task: Task, aliases: Aliases, baseImageId?: string): Promise<PreparedImage> {
  if (baseImageId !== undefined && (task.image.mode === 'pull' || task.image.mode === 'overlay')) return batchPinnedBase(provider, task, aliases, baseImageId);
  const record = task.image.mode === 'prebuilt' ? null : readRecord(task, aliases);
  if (record?.image_id) {
    const config = await provider.images.config(record.image_id);
    if (config) return pinnedAgentImage(provider, task, record.image, config, false);
    if (task.image.mode !== 'build') {
      throw new SeedFailed(
        'harbor:seed_failed',
        `the base image ${record.image} was pinned at prepare to ${record.image_id}, which is no longer on this host; run \`berth prepare\` again`,
      );
    }
  }
  const agent = await prepareAgentImage(provider, task, aliases);
  if (task.image.mode !== 'prebuilt') writeRecord(task, aliases, agent);
  return agent;
}

/**
 * The image an episode's sandbox starts from: the task's, or for an installed agent its layer over it (same
 * configuration on record: the layer only adds files and labels).
 */
export async function episodeImage(provider: SandboxProvider, task: Task, o: { aliases: Aliases; baseImageId?: string; agent?: string }): Promise<PreparedImage> {
  const prepared = await taskImageForSeed(provider, task, o.aliases, o.baseImageId);
  const agent = o.agent ? installedAgent(o.agent) : undefined;
  if (!agent) return prepared;
  const tag = layerTag(await imageId(provider, prepared.ref), agent);
  if (!(await layerExists(provider, tag))) {
    throw new AgentLayerMissing(`${agent.name} ${agent.version} is not installed over ${prepared.name} on this host yet (${tag})`);
  }
  return { ...prepared, ref: tag };
}
