import { hostQueueSuffix } from '../config/env.ts';
import { hostIdentity } from '../activities/host-identity.ts';
import { readSlots } from '../activities/slots.ts';
import { slotCapacity, slotsFile } from '../activities/slot-capacity.ts';
import { hostPollers } from './host-workers.ts';

export interface HostStatus {
  host: string;
  queue: string;
  /** The workers polling this host's sandbox queue (each process on the host, per Temporal). */
  workers: Array<{ identity: string; last_poll: string }>;
  slots: { in_use: number; capacity: number; file: string; leases: Array<{ workflow_id: string; state: 'held' | 'leaving'; by: string; since: string }> };
}

/**
 * This host as `berth server status` shows it: its sandbox queue, the workers polling it and its slots in use.
 * BERTH_HOST_QUEUE_SUFFIX names a test worker's queue, as for `berth worker`.
 */
export async function hostStatus(address: string | undefined, namespace = 'default'): Promise<HostStatus> {
  const { host, queue } = await hostIdentity({ suffix: hostQueueSuffix() });
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
