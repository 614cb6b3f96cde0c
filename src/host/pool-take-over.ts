// Which pooled sandbox's slot a waiting episode takes on a full host (HostSlots.tryReserve). Pure.
import type { Lease } from '../config/slots.ts';

/**
 * The pool lease an episode's reservation takes over, or undefined when the host has none. The episode's seed claims
 * the sandbox when it could have claimed it anyway and removes it otherwise, so the choice goes, in order: the one
 * seeded for this very episode, one of its task seeded for no particular episode, one seeded for no particular
 * episode, one of its task seeded for another episode, then any. A sandbox seeded for another episode goes last:
 * taking it over removes it, and that episode then seeds fresh.
 */
export function poolLeaseToTake(leases: readonly Lease[], episode: { workflowId: string; task?: string }): Lease | undefined {
  const pools = leases.filter((l) => l.pool);
  const sameTask = (l: Lease) => episode.task !== undefined && l.pool!.task === episode.task;
  const forNone = (l: Lease) => l.pool!.for === undefined;
  return pools.find((l) => l.pool!.for === episode.workflowId)
    ?? pools.find((l) => forNone(l) && sameTask(l))
    ?? pools.find(forNone)
    ?? pools.find(sameTask)
    ?? pools[0];
}
