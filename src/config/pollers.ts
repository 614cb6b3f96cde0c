// Which workers poll a queue, per Temporal: the worker tells its log who shares its host, the server whether a
// worker is up.
import { Connection } from '@temporalio/client';
import { hostname } from 'node:os';

export interface Poller { identity: string; lastAccess: Date }

/** How recent a poll must be for its worker to count as polling (a poller asks again within a minute). */
const RECENT_MS = 70_000;

/** The workers that polled a queue within the last minute, per Temporal: its workflow pollers, or its activity pollers. */
export async function queuePollers(address: string, namespace: string, queue: string, kind: 'workflow' | 'activity'): Promise<Poller[]> {
  const connection = await Connection.connect({ address, connectTimeout: 3000 });
  try {
    const res = await connection.workflowService.describeTaskQueue({
      namespace, taskQueue: { name: queue, kind: 1 }, taskQueueType: kind === 'workflow' ? 1 : 2,
    });
    return recentPollers(res.pollers);
  } finally {
    await connection.close();
  }
}

/** The pollers of a DescribeTaskQueue answer that polled within the last minute. */
export function recentPollers(pollers: Array<{ identity?: string | null; lastAccessTime?: { seconds?: unknown } | null }> | null | undefined, now = Date.now()): Poller[] {
  return (pollers ?? [])
    .map((p) => ({ identity: p.identity ?? '?', lastAccess: new Date(Number(p.lastAccessTime?.seconds ?? 0) * 1000) }))
    .filter((p) => now - p.lastAccess.getTime() < RECENT_MS);
}

/** The workers polling a host's sandbox queue. */
export const hostPollers = (address: string, namespace: string, queue: string): Promise<Poller[]> =>
  queuePollers(address, namespace, queue, 'activity');

/**
 * The pollers less those of this machine whose process is gone: Temporal keeps a poller for about a minute after its
 * worker died (a worker's identity is the SDK's `<pid>@<hostname>`), and a killed worker is not one that shares slots.
 */
export function withoutGoneLocal(pollers: Poller[], isRunning: (pid: number) => boolean, host = hostname()): Poller[] {
  return pollers.filter((p) => {
    const at = p.identity.indexOf('@');
    const pid = Number(p.identity.slice(0, at));
    return at <= 0 || p.identity.slice(at + 1) !== host || !Number.isInteger(pid) || isRunning(pid);
  });
}
