// An image entrypoint's output, copied out of its sandbox to a host file (Task Folder Verifiers § Image
// entrypoint: kept as entrypoint-stdout.txt, a separate verifier image's as verifier-entrypoint-stdout.txt).
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ENTRYPOINT_OUTPUT, type SandboxHandle, type SandboxProvider } from '../sandbox/index.ts';
import { redactFile } from '../trajectory/redact.ts';

/** Copies the entrypoint's output to `target` on the host, redacted of `hidden`. */
export async function copyEntrypointOutput(provider: SandboxProvider, handle: SandboxHandle, target: string, hidden: readonly string[]): Promise<void> {
  const tmp = join(dirname(target), `.entrypoint-${basename(target)}`);
  await mkdir(dirname(target), { recursive: true });
  try {
    await provider.download(handle, ENTRYPOINT_OUTPUT, tmp);
    await rename(join(tmp, basename(ENTRYPOINT_OUTPUT)), target);
    await redactFile(target, hidden);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
