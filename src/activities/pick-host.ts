import { Context, heartbeat, log, sleep } from '@temporalio/activity';
import type { HostLease } from './types.ts';
import type { HostServices } from '../host/deps.ts';
import { reconcileSlots, runIsOpen, seedBoundMs } from '../host/slot-reconcile.ts';

/** The longest a waiter goes without looking again (it is woken sooner when the slots file changes). */
const LOOK_EVERY_MS = 1000;

/** What a waiting pickHost heartbeats (read back by `berth status` and the progress line). */
export interface SlotWait {
  waiting: { host: string; inUse: number; capacity: number };
}

/**
 * Returns this host's queue once a sandbox slot of the host (shared by every worker process polling its queue) is
 * reserved for the episode (on a full host, a warm pool's slot: `task`, the episode's digest, picks one seeded for
 * its task first). While waiting it heartbeats how many are in use, and now and then frees slots that
 * nobody else will (src/host/slot-reconcile.ts).
 */
export async function pickHost(deps: HostServices, req: { episodeId: string; task?: string }): Promise<HostLease> {
  const { identity: id, slots } = deps;
  const runId = Context.current().info.workflowExecution?.runId ?? '';
  while (!(await slots.tryReserve(req.episodeId, runId, req.task))) {
    const details: SlotWait = { waiting: { host: id.host, inUse: slots.inUse, capacity: slots.capacity } };
    heartbeat(details);
    if (deps.reconcileDue()) {
      const done = await reconcileSlots({ slots, remover: deps.remover, isOpen: runIsOpen(Context.current().client), seedBoundMs: seedBoundMs() });
      for (const line of done) log.info(`berth worker: slot ${line}`);
    }
    await Promise.race([sleep(LOOK_EVERY_MS), slots.changed(LOOK_EVERY_MS)]);
  }
  return id;
}
