// Between turns of a multi-step task: the previous turn's grading files go, everything else stays.
import type { SandboxHandle, SandboxProvider } from '../sandbox/index.ts';
import { VerificationMasked } from './masked.ts';
import { clearScript, startFailure } from './sandbox-scripts.ts';

/**
 * Empties /tests and /logs/verifier (declared sidecar `inputs` survive as regular files) and removes
 * /logs/agent/trajectory.json. Throws SandboxLost when the sandbox is gone, VerificationMasked when it cannot run.
 */
export async function clearTurnFiles(provider: SandboxProvider, handle: SandboxHandle, inputs: readonly string[] = []): Promise<void> {
  const res = await provider.exec(handle, { command: `set -e\n${clearScript(inputs)}`, user: 'root', workdir: '/', outputCapBytes: 64 * 1024 });
  const cannot = startFailure(res);
  if (cannot) throw new VerificationMasked('verifier_error', `could not clear the previous turn's files: ${cannot}`);
  if (res.exitCode !== 0) {
    throw new VerificationMasked('verifier_error', `could not clear the previous turn's files (exit ${res.exitCode}): ${(res.stderr || res.stdout).trim()}`);
  }
}
