// The agent sandbox's entrypoint output, kept on the host as entrypoint-stdout.txt with the turn's verifier logs
// (Task Folder Verifiers § Image entrypoint), so a harbor:entrypoint_failed reason points at a file the user has.
import { join } from 'node:path';
import { ENTRYPOINT_OUTPUT, type SandboxHandle, type SandboxProvider } from '../sandbox/index.ts';
import { copyEntrypointOutput } from '../verify/index.ts';
import { EntrypointDied } from './errors.ts';

/**
 * Copies the entrypoint's output to `<turnDir>/verifier/entrypoint-stdout.txt` (after the verifier's logs landed
 * there): that host path, or null when it could not be copied (a record only: it never changes an outcome).
 */
export async function keepEntrypointOutput(provider: SandboxProvider, handle: SandboxHandle, turnDir: string, hidden: readonly string[]): Promise<string | null> {
  const target = join(turnDir, 'verifier', 'entrypoint-stdout.txt');
  return copyEntrypointOutput(provider, handle, target, hidden).then(() => target, () => null);
}

/** docs/design.md section 7, Images: an image entrypoint that died during the rollout masks the episode. */
export async function failIfEntrypointDied(provider: SandboxProvider, handle: SandboxHandle, turnDir: string, hidden: readonly string[]): Promise<void> {
  const state = await provider.entrypointState(handle);
  if (state.state === 'lost' || (state.state === 'exited' && state.exitCode !== 0)) {
    const kept = await keepEntrypointOutput(provider, handle, turnDir, hidden);
    const how = state.state === 'lost' ? 'was killed' : `exited with code ${state.exitCode}`;
    const where = kept ? `its output is kept in ${kept}` : `its output (${ENTRYPOINT_OUTPUT} in the sandbox) could not be copied`;
    throw new EntrypointDied(`the image's entrypoint ${how} during the rollout; ${where}`);
  }
}
