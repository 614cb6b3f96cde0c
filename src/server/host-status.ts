import { readSlots, slotCapacity, slotsFile } from '../config/slots.ts';
import { hostPollers } from '../config/pollers.ts';

export interface HostStatus {
  host: string;
  queue: string;
  /** The workers polling this host's sandbox queue (each process on the host, per Temporal). */
  workers: Array<{ identity: string; last_poll: string }>;
  slots: { in_use: number; capacity: number; file: string; leases: Array<{ workflow_id: string; state: 'held' | 'leaving'; by: string; since: string }> };
}

/**
 * This host as `berth server status` shows it: its sandbox queue, the workers polling it and its slots in use.
 * `identity` is the host's name and sandbox queue as its worker names them (src/worker.ts, hostIdentity).
 */
export async function hostStatus(identity: { host: string; queue: string }, address: string | undefined, namespace = 'default'): Promise<HostStatus> {
  const { host, queue } = identity;
  const file = slotsFile(queue);
  const view = readSlots(file);
  const workers = address ? await hostPollers(address, namespace, queue).catch(() => []) : [];
  return {
    host, queue, workers: workers.map((p) => ({ identity: p.identity, last_poll: p.lastAccess.toISOString() })),
    slots: {
      in_use: view.leases.length, capacity: view.capacity ?? slotCapacity().slots, file,
      leases: view.leases.map((l) => ({
        workflow_id: l.workflowId, state: l.leaving !== undefined ? 'leaving' : 'held', by: l.by, since: new Date(l.leaving ?? l.at).toISOString(),
      })),
    },
  };
}
