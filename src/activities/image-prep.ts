// What prepare made ready on this host, recorded per task version and alias map under BERTH_HOME/images. The seed
// starts from the recorded image id, so a base tag that moves after prepare (or differs between hosts) does not
// change the episode (task-folder-format.md § Dockerfile modes: "pinned to its digest at prepare").
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { homePath } from '../config/paths.ts';
import { pinnedAgentImage, prepareAgentImage, prepareVerifierImage, SeedFailed, type PreparedImage, type SandboxProvider } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import { verifierImagesOf } from '../verify/index.ts';

export interface ImageRecord {
  task_id: string;
  path: string;
  digest: string;
  mode: string;
  /** The reference the task names (after aliases), or the built `hb__<hash>` tag. */
  image: string;
  /** The image id episodes start from (pull, overlay and build modes). */
  image_id?: string;
  built: boolean;
  /** The first separate verifier image; `verifier_images` lists every one (a multi-step task's per step). */
  verifier_image?: string;
  verifier_images?: string[];
  at: string;
}

type Aliases = Readonly<Record<string, string>>;

function recordPath(task: Task, aliases: Aliases): string {
  const key = createHash('sha256').update(JSON.stringify([task.path, task.digest, Object.entries(aliases).sort()])).digest('hex');
  return homePath('images', `${task.id}-${key.slice(0, 12)}.json`);
}

function writeRecord(task: Task, aliases: Aliases, agent: PreparedImage, verifiers: PreparedImage[] = []): void {
  const record: ImageRecord = {
    task_id: task.id, path: task.path, digest: task.digest, mode: task.image.mode, image: agent.name,
    ...(agent.config ? { image_id: agent.ref } : {}), built: agent.built,
    ...(verifiers.length > 0 ? { verifier_image: verifiers[0]!.name, verifier_images: verifiers.map((v) => v.name) } : {}), at: new Date().toISOString(),
  };
  const path = recordPath(task, aliases);
  mkdirSync(join(path, '..'), { recursive: true });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, path);
}

function readRecord(task: Task, aliases: Aliases): ImageRecord | null {
  try {
    const r = JSON.parse(readFileSync(recordPath(task, aliases), 'utf8')) as ImageRecord;
    return r.digest === task.digest && r.mode === task.image.mode ? r : null;
  } catch {
    return null;
  }
}

/** Prepare: the agent's image and every separate verifier's (a multi-step task's per step) made ready here and recorded. */
export async function prepareAndRecord(provider: SandboxProvider, task: Task, aliases: Aliases): Promise<{ agent: PreparedImage; verifiers: PreparedImage[] }> {
  const agent = await prepareAgentImage(provider, task, aliases);
  const verifiers: PreparedImage[] = [];
  for (const v of verifierImagesOf(task)) verifiers.push(await prepareVerifierImage(provider, task, v.image, aliases, v.gpus));
  writeRecord(task, aliases, agent, verifiers);
  return { agent, verifiers };
}

/**
 * The base the batch's prepare pinned, on whichever host the episode runs: this host's tag may name another image
 * (or none), and the episode still starts from the pinned one, or fails its seed saying how to get it here.
 */
async function batchPinnedBase(provider: SandboxProvider, task: Task, aliases: Aliases, id: string): Promise<PreparedImage> {
  const name = task.image.image!;
  const config = await provider.imageConfig(id);
  if (config) return pinnedAgentImage(provider, task, name, config, false);
  const here = await provider.imageConfig(name);
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
export async function agentImageForSeed(provider: SandboxProvider, task: Task, aliases: Aliases, baseImageId?: string): Promise<PreparedImage> {
  if (baseImageId !== undefined && (task.image.mode === 'pull' || task.image.mode === 'overlay')) return batchPinnedBase(provider, task, aliases, baseImageId);
  const record = task.image.mode === 'prebuilt' ? null : readRecord(task, aliases);
  if (record?.image_id) {
    const config = await provider.imageConfig(record.image_id);
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
