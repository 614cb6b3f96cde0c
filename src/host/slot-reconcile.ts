import { scheduleToStartSec } from '../config/env.ts';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Remover } from './remover.ts';
import type { SandboxSlots } from './sandbox-slots.ts';
import { poolOwnerLive } from './pool-owner.ts';
import { episodeSandboxNames, freeing } from './tear-down.ts';

/** A lease younger than this is never questioned (its episode is just starting). */
const MIN_AGE_MS = 20_000;
/** A leaving lease that no remover freed in this time (its process died) is removed and freed by whoever looks. */
const LEAVING_PATIENCE_MS = 60_000;

export interface ReconcileDeps {
  slots: SandboxSlots;
  remover: Pick<Remover, 'schedule' | 'has'>;
  /** Whether the episode run still runs; throwing keeps its slot (Temporal not reachable right now). */
  isOpen(workflowId: string, runId: string): Promise<boolean>;
  /** A slot reserved and not seeded for this long is freed (its reservation's attempt died before reporting). */
  seedBoundMs: number;
  now?: () => number;
  /** Whether a warm pool's owner process runs (poolOwnerLive, which tests replace). */
  ownerLive?: (owner: string) => boolean;
}

/**
 * Frees the slots nobody else will (docs/design.md section 7, Slots): an episode that closed while holding one (its
 * sandboxes are removed first), one reserved and never seeded within the bound, and a leaving one whose remover
 * died. Returns what it did, one line per slot, for the worker's log.
 */
export async function reconcileSlots(d: ReconcileDeps): Promise<string[]> {
  const now = d.now ?? Date.now;
  const done: string[] = [];
  await d.slots.refresh();
  for (const l of d.slots.leases()) {
    if (l.pool) {
      // A warm pool's sandbox: its worker process removes it, unless that process is gone.
      if (!(d.ownerLive ?? poolOwnerLive)(l.pool.owner) && !d.remover.has(l.key)) {
        d.remover.schedule(l.key, [l.pool.name], freeing(d.slots, l.key));
        done.push(`${l.key}: seeded ahead by worker ${l.pool.owner}, which is gone; removing it`);
      }
      continue;
    }
    if (l.leaving !== undefined) {
      if (now() - l.leaving > LEAVING_PATIENCE_MS && !d.remover.has(l.key)) {
        d.remover.schedule(l.key, l.names ?? [], freeing(d.slots, l.key));
        done.push(`${l.key}: torn down ${Math.round((now() - l.leaving) / 1000)} s ago and not yet freed; removing its sandboxes here`);
      }
      continue;
    }
    if (now() - l.at < MIN_AGE_MS) continue;
    let open = true;
    try {
      open = await d.isOpen(l.workflowId, l.runId);
    } catch {
      continue;
    }
    if (!open) {
      const names = episodeSandboxNames(l.workflowId, l.runId);
      const key = await d.slots.vacate(l.workflowId, l.runId, names);
      if (key) d.remover.schedule(key, names, freeing(d.slots, key));
      done.push(`${l.workflowId}: closed while holding a slot; removing its sandboxes, then freeing it`);
    } else if (l.seeded === undefined && now() - l.at > d.seedBoundMs) {
      await d.slots.free(l.key);
      done.push(`${l.workflowId}: reserved ${Math.round((now() - l.at) / 1000)} s ago and never seeded here; freed`);
    }
  }
  return done;
}

/** Whether a workflow run is still running, asked of Temporal. */
export function runIsOpen(client: Client): ReconcileDeps['isOpen'] {
  return async (workflowId, runId) => {
    try {
      return (await client.workflow.getHandle(workflowId, runId).describe()).status.name === 'RUNNING';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  };
}

/** How long a reserved slot may wait for its seed: the seed's schedule-to-start timeout twice, and a minute. */
export function seedBoundMs(): number {
  return (2 * scheduleToStartSec() + 60) * 1000;
}
