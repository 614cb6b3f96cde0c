import { hostNameOverride } from '../config/env.ts';
import { hostname } from 'node:os';
import { hostQueueName } from '../config/index.ts';
import { DockerSandboxProvider, type SandboxProvider } from '../sandbox/index.ts';
import type { HostLease } from '../activities/types.ts';

/**
 * The per-host queue is named after the Docker engine's id, so a restarted worker picks the same one; `suffix`
 * gives a test's worker a queue of its own, so no other worker on this engine takes its activities. The host's
 * name (in rows and status) is BERTH_HOST_NAME, else the name the engine reports (its machine's, also for a
 * worker in a container), else this machine's.
 */
export async function hostIdentity(opts: { provider?: SandboxProvider; suffix?: string } = {}): Promise<HostLease> {
  const engine = await (opts.provider ?? new DockerSandboxProvider()).engineInfo();
  const suffix = opts.suffix ? `-${opts.suffix}` : '';
  return { host: hostNameOverride() || engine.name || hostname(), queue: hostQueueName(engine.id) + suffix };
}
