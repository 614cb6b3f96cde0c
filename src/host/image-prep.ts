// What prepare made ready on this host, recorded per task version and alias map under BERTH_HOME/images. The seed
// starts from the recorded image id, so a base tag that moves after prepare (or differs between hosts) does not
// change the episode (Task Folder Format § Dockerfile modes: "pinned to its digest at prepare").
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { homePath } from '../config/paths.ts';
import { prepareAgentImage, prepareVerifierImage, type PreparedImage, type SandboxProvider } from '../sandbox/index.ts';
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

export type Aliases = Readonly<Record<string, string>>;

function recordPath(task: Task, aliases: Aliases): string {
  const key = createHash('sha256').update(JSON.stringify([task.path, task.digest, Object.entries(aliases).sort()])).digest('hex');
  return homePath('images', `${task.id}-${key.slice(0, 12)}.json`);
}

export function writeRecord(task: Task, aliases: Aliases, agent: PreparedImage, verifiers: PreparedImage[] = []): void {
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

export function readRecord(task: Task, aliases: Aliases): ImageRecord | null {
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
