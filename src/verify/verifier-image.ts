// The separate verifier's image (task-folder-verifiers.md § Shared and separate verification), made ready by the
// one image-preparation module (src/sandbox/image-prep.ts); here its failures become masked outcomes.
import { isLossError, prepareVerifierImage, type PreparedImage, type SandboxProvider } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';
import { transferFailed, VerificationMasked } from './masked.ts';

export async function resolveVerifierImage(
  provider: SandboxProvider,
  task: Task,
  aliases: Readonly<Record<string, string>>,
): Promise<PreparedImage> {
  try {
    return await prepareVerifierImage(provider, task, aliases);
  } catch (err) {
    if (err instanceof VerificationMasked) throw err;
    if (isLossError(err)) throw transferFailed("making the separate verifier's image ready", err);
    const message = err instanceof Error ? err.message : String(err);
    throw new VerificationMasked('harbor:seed_failed', `the separate verifier's image could not be made ready: ${message}`);
  }
}
