// [[verifier.collect]] hooks: run before clearing and before any artifact is copied (spec/task-folder-format.md
// § [verifier], collect). A hook that fails, times out or names a missing service only warns; one the sandbox
// cannot run (no bash, an unknown user) masks the row.
import type { SandboxHandle, SandboxProvider } from '../sandbox/index.ts';
import type { CollectHook } from '../task/index.ts';
import { tailOf } from './failure-reason.ts';
import { VerificationMasked } from './masked.ts';
import { startFailure } from './sandbox-scripts.ts';

const HOOK_OUTPUT_CAP = 16 * 1024;

export async function runCollectHooks(
  provider: SandboxProvider,
  agent: SandboxHandle,
  hooks: readonly CollectHook[],
  warnings: string[],
  heartbeat: () => void,
): Promise<void> {
  for (const [i, hook] of hooks.entries()) {
    const label = `[[verifier.collect]] #${i + 1} (${tailOf(hook.command, 120)})`;
    if (hook.service !== 'main') {
      warnings.push(`${label} names service "${hook.service}", which this task does not have (its only service is main); the hook was skipped and verification went on.`);
      continue;
    }
    const res = await provider.exec(agent, {
      command: hook.command,
      // Unset: the service's default user, in main the task's agent user (the sandbox's default).
      user: hook.user === null ? agent.user : String(hook.user),
      workdir: agent.workdir,
      timeoutSec: hook.timeout_sec,
      outputCapBytes: HOOK_OUTPUT_CAP,
    });
    heartbeat();
    const cannot = startFailure(res);
    if (cannot) throw new VerificationMasked('verifier_error', `${label} could not run: ${cannot}`);
    const output = tailOf(`${res.stdout}${res.stderr}`.trim(), 400);
    if (res.timedOut) warnings.push(`${label} timed out after ${hook.timeout_sec}s; verification went on. Output: ${output}`);
    else if (res.exitCode !== 0) warnings.push(`${label} exited ${res.exitCode}; verification went on. Output: ${output}`);
  }
}
