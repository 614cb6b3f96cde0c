// `--sandbox docker|kubernetes` (docs/kubernetes.md): the sandbox a worker runs episodes in, and the one a run or a
// prepare goes to, through the shared queue of that sandbox's workers.
import { Option } from 'commander';
import { loadBerthConfig, SANDBOX_PROVIDERS, type SandboxProviderName } from '../config/berth-config.ts';
import { sandboxSharedQueue, sharedQueue } from '../config/index.ts';

export function sandboxOption(description: string): Option {
  return new Option('--sandbox <name>', description).choices(SANDBOX_PROVIDERS);
}

/** The shared queue work for `sandbox` goes to: its own, else that of berth.toml [sandbox] provider (default docker). */
export function sandboxQueue(sandbox: SandboxProviderName | undefined): string {
  return sandboxSharedQueue(sharedQueue(), sandbox ?? loadBerthConfig().config.sandbox.provider);
}
