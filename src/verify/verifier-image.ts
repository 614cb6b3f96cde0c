// The separate verifier's image (Task Folder Verifiers § Shared and separate verification), made ready by the
// one image-preparation module (src/sandbox/image-prep.ts); here its failures become masked outcomes.
import { SandboxLost, prepareVerifierImage, type PreparedImage, type SandboxProvider } from '../sandbox/index.ts';
import type { Task, VerifierImage } from '../task/index.ts';
import { transferFailed, VerificationMasked } from './masked.ts';

/** Every separate verifier image a task needs, once each: the task's own (single-step) or its separate steps'. */
export function verifierImagesOf(task: Task): Array<{ image: VerifierImage; gpus: { count: number | null; key: string } }> {
  const all = task.multi_step
    ? task.steps.map((s, i) => ({ image: s.verifier.image, gpus: { count: s.verifier.environment?.gpus ?? null, key: `[steps.verifier.environment].gpus of step ${i + 1}` } }))
    : [{ image: task.verifier.image, gpus: { count: task.verifier.environment?.gpus ?? null, key: '[verifier.environment].gpus' } }];
  const byKey = new Map<string, { image: VerifierImage; gpus: { count: number | null; key: string } }>();
  for (const v of all) if (v.image !== null && !byKey.has(JSON.stringify(v.image))) byKey.set(JSON.stringify(v.image), { image: v.image, gpus: v.gpus });
  return [...byKey.values()];
}

/** Makes a separate verifier's image ready (the task's, or a step's); a failure masks the row. */
export async function resolveVerifierImage(
  provider: SandboxProvider,
  task: Task,
  image: VerifierImage,
  aliases: Readonly<Record<string, string>>,
  gpus?: { count: number | null; key: string },
): Promise<PreparedImage> {
  try {
    return await prepareVerifierImage(provider, task, image, aliases, gpus);
  } catch (err) {
    if (err instanceof VerificationMasked) throw err;
    if (err instanceof SandboxLost) throw transferFailed("making the separate verifier's image ready", err);
    const message = err instanceof Error ? err.message : String(err);
    throw new VerificationMasked('harbor:seed_failed', `the separate verifier's image could not be made ready: ${message}`);
  }
}
