// `berth run --keep-final-state`: the agent's sandbox committed to an image after the last agent turn, so a regrade
// can verify the same state again without the agent. Images are labelled, removed by `berth gc` or once older than
// the retention period (swept whenever a new one is kept).
import { createHash } from 'node:crypto';
import type Docker from 'dockerode';
import { asSandboxError } from './loss.ts';
import { LABEL_BATCH, LABEL_WORKFLOW } from '../names.ts';
import type { GcSelection, KeptState } from '../final-states.ts';

export const LABEL_FINAL_STATE = 'berth.final-state';
const LABEL_RUN = 'berth.run';
const LABEL_KEPT_AT = 'berth.kept-at';
const REPO = 'berth-final-state';

/** The image an episode run's final state is kept as: deterministic, so a retried commit replaces its own. */
export function finalStateImage(workflowId: string, runId: string): string {
  return `${REPO}:${createHash('sha256').update(`${workflowId}\0${runId}`).digest('hex').slice(0, 24)}`;
}

/** Commits the container (paused while it is copied) to the run's final-state image. */
export async function keepFinalState(docker: Docker, container: string, ids: { batch: string; workflowId: string; runId: string }, retention: number): Promise<string> {
  const image = finalStateImage(ids.workflowId, ids.runId);
  const [repo, tag] = image.split(':') as [string, string];
  try {
    await docker.getContainer(container).commit({
      repo, tag, pause: true, comment: `final state of ${ids.workflowId} (${ids.runId})`,
      // The body is the image's configuration; its labels are what gc and a regrade find the image by.
      Labels: {
        [LABEL_FINAL_STATE]: '1', [LABEL_BATCH]: ids.batch, [LABEL_WORKFLOW]: ids.workflowId, [LABEL_RUN]: ids.runId,
        [LABEL_KEPT_AT]: new Date().toISOString(),
      },
    });
  } catch (err) {
    throw asSandboxError(container, err);
  }
  // Images past the retention period go whenever a new one is kept (best effort; `berth gc` does it on demand).
  void removeFinalStates(docker, {}, retention).catch(() => undefined);
  return image;
}

/** Every final-state image on this engine. */
export async function listFinalStates(docker: Docker): Promise<KeptState[]> {
  const images = await docker.listImages({ filters: { label: [`${LABEL_FINAL_STATE}=1`] } });
  return images.flatMap((i) => {
    const labels = i.Labels ?? {};
    const image = (i.RepoTags ?? []).find((t) => t.startsWith(`${REPO}:`));
    if (!image) return [];
    return [{ image, batch: labels[LABEL_BATCH] ?? '', workflowId: labels[LABEL_WORKFLOW] ?? '', runId: labels[LABEL_RUN] ?? '', keptAt: labels[LABEL_KEPT_AT] ?? '' }];
  });
}

/** Removes the chosen final-state images; returns them. An image a running container still uses is left (and listed in `kept`). */
/** `retention`: the retention period in days, what a selection without batch, all or olderThanDays removes. */
export async function removeFinalStates(docker: Docker, sel: GcSelection, retention: number, now = Date.now()): Promise<{ removed: KeptState[]; kept: Array<KeptState & { reason: string }> }> {
  const olderThan = sel.olderThanDays ?? (sel.all || sel.batch ? undefined : retention);
  const chosen = (await listFinalStates(docker)).filter((k) =>
    (sel.batch === undefined || k.batch === sel.batch) &&
    (olderThan === undefined || !(Date.parse(k.keptAt) > now - olderThan * 86_400_000)));
  const removed: KeptState[] = [];
  const kept: Array<KeptState & { reason: string }> = [];
  for (const k of chosen) {
    try {
      await docker.getImage(k.image).remove();
      removed.push(k);
    } catch (err) {
      kept.push({ ...k, reason: (err as Error).message });
    }
  }
  return { removed, kept };
}
