import { Context, heartbeat, log, sleep } from '@temporalio/activity';
import type { HostLease } from '../workflows/types.ts';
import { hostIdentity } from './host-identity.ts';
import { reconcileSlots, runIsOpen, seedBoundMs } from './slot-reconcile.ts';
import { hostRemover, hostSlots } from './worker-state.ts';

/** How often one waiting process looks for slots nobody else will free. */
const RECONCILE_EVERY_MS = 10_000;
/** The longest a waiter goes without looking again (it is woken sooner when the slots file changes). */
const LOOK_EVERY_MS = 1000;

let lastReconcile = 0;

/** What a waiting pickHost heartbeats (read back by `berth status` and the progress line). */
export interface SlotWait {
  waiting: { host: string; inUse: number; capacity: number };
}

/**
 * Returns this host's queue once a sandbox slot of the host (shared by every worker process polling its queue) is
 * reserved for the episode. While waiting it heartbeats how many are in use, and now and then frees slots that
 * nobody else will (src/activities/slot-reconcile.ts).
 */
export async function pickHost(req: { episodeId: string }): Promise<HostLease> {
  const id = await hostIdentity();
  const slots = hostSlots(id.queue);
  const runId = Context.current().info.workflowExecution?.runId ?? '';
  while (!(await slots.tryReserve(req.episodeId, runId))) {
    const details: SlotWait = { waiting: { host: id.host, inUse: slots.inUse, capacity: slots.capacity } };
    heartbeat(details);
    if (Date.now() - lastReconcile > RECONCILE_EVERY_MS) {
      lastReconcile = Date.now();
      const done = await reconcileSlots({ slots, remover: hostRemover(id.queue), isOpen: runIsOpen(Context.current().client), seedBoundMs: seedBoundMs() });
      for (const line of done) log.info(`berth worker: slot ${line}`);
    }
    await Promise.race([sleep(LOOK_EVERY_MS), slots.changed(LOOK_EVERY_MS)]);
  }
  return id;
}
