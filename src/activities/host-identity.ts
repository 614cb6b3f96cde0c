import { hostname } from 'node:os';
import { hostQueueName } from '../workflows/types.ts';
import { sandboxProvider } from './runtime.ts';

let cached: { host: string; queue: string } | undefined;
let suffix = '';

/** Tests give each worker its own sandbox queue so no other worker on this engine takes its activities. */
export function setHostQueueSuffix(value: string): void {
  suffix = value ? `-${value}` : '';
  cached = undefined;
}

/** The per-host queue is named after the Docker engine's id, so a restarted worker picks the same one. */
export async function hostIdentity(): Promise<{ host: string; queue: string }> {
  if (!cached) {
    const info = await sandboxProvider().docker.info();
    cached = { host: hostname(), queue: hostQueueName(String(info.ID)) + suffix };
  }
  return cached;
}
