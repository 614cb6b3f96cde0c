import { hostname } from 'node:os';
import { sandboxProvider } from './runtime.ts';
import { hostQueueName } from '../config/index.ts';

let cached: { host: string; queue: string } | undefined;
let suffix = '';

/** Tests give each worker its own sandbox queue so no other worker on this engine takes its activities. */
export function setHostQueueSuffix(value: string): void {
  suffix = value ? `-${value}` : '';
  cached = undefined;
}

/**
 * The per-host queue is named after the Docker engine's id, so a restarted worker picks the same one. The host's
 * name (in rows and status) is BERTH_HOST_NAME, else the name the engine reports (its machine's, also for a
 * worker in a container), else this machine's.
 */
export async function hostIdentity(): Promise<{ host: string; queue: string }> {
  if (!cached) {
    const info = await sandboxProvider().docker.info();
    cached = { host: process.env.BERTH_HOST_NAME || String(info.Name || hostname()), queue: hostQueueName(String(info.ID)) + suffix };
  }
  return cached;
}
