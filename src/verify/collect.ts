// [[verifier.collect]] hooks: run before clearing and before any artifact is copied. A hook that fails or times
// out, or names a service the task does not have, only warns; one the sandbox cannot run (no bash in main, no sh in a
// sidecar, an unknown user) masks the row (Task Folder Format § [verifier], collect).
import { shellQuote, type SandboxHandle, type SandboxProvider } from '../sandbox/index.ts';
import type { CollectHook } from '../task/index.ts';
import { tailOf } from './failure-reason.ts';
import { VerificationMasked } from './masked.ts';
import { startFailure } from './sandbox-scripts.ts';

const HOOK_OUTPUT_CAP = 16 * 1024;

/** How task.toml names hook `i`: `[[verifier.collect]] #n`, or `[[steps.verifier.collect]] #n of step s`. */
function hookName(hooks: readonly CollectHook[], i: number): string {
  const hook = hooks[i]!;
  const n = hooks.slice(0, i + 1).filter((h) => h.step === hook.step).length;
  return hook.step === undefined ? `[[verifier.collect]] #${n}` : `[[steps.verifier.collect]] #${n} of step ${hook.step}`;
}

/**
 * Runs the hooks whose service `which` selects (Harbor's order in separate mode: main's, then the sidecars'
 * once main is stopped). `services` are the group's (a Compose task); a hook naming a service that is not there
 * only warns (Task Folder Format § [verifier], collect).
 */
export async function runCollectHooks(
  provider: SandboxProvider,
  agent: SandboxHandle,
  hooks: readonly CollectHook[],
  warnings: string[],
  heartbeat: () => void,
  services: Readonly<Record<string, SandboxHandle>> = {},
  which: 'all' | 'main' | 'sidecars' = 'all',
): Promise<void> {
  for (const [i, hook] of hooks.entries()) {
    const isMain = hook.service === 'main';
    if ((which === 'main' && !isMain) || (which === 'sidecars' && isMain)) continue;
    const label = `${hookName(hooks, i)} (${tailOf(hook.command, 120)})`;
    const target = isMain ? agent : services[hook.service];
    if (!target) {
      const have = Object.keys(services).length > 0 ? Object.keys(services).join(', ') : 'main';
      warnings.push(`${label} names service "${hook.service}", which this task does not have (its services: ${have}); the hook was skipped and verification went on.`);
      continue;
    }
    const res = await provider.exec(target, {
      // From the service's working directory, or from / when the agent removed it (an exec into it would never start).
      command: `cd -- ${shellQuote(target.workdir)} 2>/dev/null || cd /\n${hook.command}`,
      // main is the agent's sandbox (bash, as for test.sh); a sidecar's image may have only sh, as Gym runs hooks.
      shell: isMain ? 'bash' : 'sh',
      // Unset: the service's default user, in main the task's agent user (the sandbox's default).
      user: hook.user === null ? target.user : String(hook.user),
      workdir: '/',
      timeoutSec: hook.timeout_sec,
      outputCapBytes: HOOK_OUTPUT_CAP,
    });
    heartbeat();
    const cannot = startFailure(res);
    if (cannot) {
      const shellless = !isMain && (await provider.pathKind(target, '/bin/sh')) === null;
      const why = shellless ? `service "${hook.service}" has no shell (no /bin/sh in its image), and a hook runs under sh -c (${cannot})` : cannot;
      throw new VerificationMasked('verifier_error', `${label} could not run: ${why}`);
    }
    const output = tailOf(`${res.stdout}${res.stderr}`.trim(), 400);
    if (res.timedOut) warnings.push(`${label} timed out after ${hook.timeout_sec}s; verification went on. Output: ${output}`);
    else if (res.exitCode !== 0) warnings.push(`${label} exited ${res.exitCode}; verification went on. Output: ${output}`);
  }
}
