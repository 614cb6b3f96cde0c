// A sidecar that dies during the rollout masks the episode (issue 13; DESIGN.md section 3, sandbox loss):
// the agent's turn watches the group while it runs, and verification looks once more before grading.
import { setTimeout as sleep } from 'node:timers/promises';
import { SandboxLost, type SandboxProvider } from '../sandbox/index.ts';
import type { SandboxRef } from './types.ts';
import { serviceHandle } from './handle.ts';

const WATCH_MS = 5_000;

/** Why the group is no longer whole (a sidecar gone, or stopped though it ran at seed), or null. */
export async function groupProblem(provider: SandboxProvider, ref: SandboxRef): Promise<string | null> {
  for (const [name, s] of Object.entries(ref.group?.services ?? {})) {
    if (name === 'main' || s.exited) continue;
    try {
      const info = await provider.inspect(serviceHandle(s));
      if (!info.running) return `sidecar "${name}" stopped during the rollout (exit code ${info.exitCode}${info.oomKilled ? ', out of memory' : ''})`;
    } catch (err) {
      if (err instanceof SandboxLost) return `sidecar "${name}" was removed during the rollout`;
      throw err;
    }
  }
  return null;
}

export async function assertGroupWhole(provider: SandboxProvider, ref: SandboxRef): Promise<void> {
  const problem = await groupProblem(provider, ref);
  if (problem) throw new SandboxLost(ref.group!.project, new Error(problem));
}

/** Rejects with SandboxLost as soon as the group is no longer whole; resolves never (until aborted). */
export async function watchGroup(provider: SandboxProvider, ref: SandboxRef, signal: AbortSignal): Promise<never> {
  for (;;) {
    await sleep(WATCH_MS, undefined, { signal });
    await assertGroupWhole(provider, ref);
  }
}
