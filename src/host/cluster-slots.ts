import type { SlotRecord, SlotStore } from '../sandbox/index.ts';
import type { Lease } from '../config/slots.ts';
import type { SandboxSlots } from './sandbox-slots.ts';
import { workerTag } from './slots.ts';

/** How often the quota on the namespace is read again. */
const QUOTA_EVERY_MS = 10_000;
/** Rounds of read-and-change before a change racing other workers gives up for now (the caller looks again). */
const ROUNDS = 6;
/** How long a waiter waits before it looks again (no watch: a list per second per worker is cheap). */
const LOOK_EVERY_MS = 1000;

interface Held { rec: SlotRecord; lease: Lease }

/**
 * The sandbox slots of a queue whose sandboxes every worker reaches (one Kubernetes cluster and namespace), kept in
 * the cluster (docs/kubernetes.md, Sandbox queues on Kubernetes): the same meaning as HostSlots (a slot per
 * episode, idempotent per episode, leaving until its sandboxes are gone), on a SlotStore where slot N is one record
 * only one worker can create. Bounded by [kubernetes].max_pods and by a pod quota on the namespace. It keeps no
 * warm pool (a pod cannot be renamed, so no pool is kept there).
 */
export class ClusterSlots implements SandboxSlots {
  /** The last list read, kept current with this worker's own changes since (so a change of ours needs no list first). */
  private view: Held[] = [];
  private quota: { room: number; quota: string } | undefined;
  private quotaAt = -Infinity;
  private reading: Promise<Held[]> | undefined;
  private reads = 0;
  /**
   * Slots this worker is taking, with the number of the last list begun before each was taken (Infinity while under
   * way): its other reservations skip them until a list begun later shows them, so episodes reserving together
   * do not all race for the lowest free slot.
   */
  private readonly claims = new Map<number, number>();

  constructor(private readonly store: SlotStore, private readonly now: () => number = Date.now) {}

  get where(): string {
    return this.store.where;
  }

  /** max_pods, or less where a quota on the namespace leaves less room. */
  get capacity(): number {
    return Math.min(this.store.maxSlots, this.quota?.room ?? Infinity);
  }

  /** What bounds the capacity now, for status. */
  get bound(): string {
    return this.quota && this.quota.room < this.store.maxSlots ? this.quota.quota : `max_pods ${this.store.maxSlots} (${this.store.maxFrom})`;
  }

  get inUse(): number {
    return this.view.length;
  }

  leases(): Lease[] {
    return this.view.map((h) => h.lease);
  }

  async refresh(): Promise<void> {
    await this.read();
  }

  /** One read at a time: waiters that ask together share it. */
  private read(): Promise<Held[]> {
    this.reading ??= (async () => {
      const number = ++this.reads;
      try {
        if (this.now() - this.quotaAt > QUOTA_EVERY_MS) {
          this.quota = await this.store.quotaRoom();
          this.quotaAt = this.now();
        }
        const records = await this.store.list();
        this.view = records.map((rec) => ({ rec, lease: parseLease(rec) }));
        for (const [slot, before] of this.claims) if (before < number) this.claims.delete(slot);
        return this.view;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  /** The view with a record of ours written (or, undefined, with the slot's record gone). */
  private keep(slot: number, rec: SlotRecord | undefined): void {
    this.view = [...this.view.filter((h) => h.rec.slot !== slot), ...(rec ? [{ rec, lease: parseLease(rec) }] : [])].sort((a, b) => a.rec.slot - b.rec.slot);
  }

  private async put(h: Held, lease: Lease): Promise<boolean> {
    const rec = await this.store.update(h.rec, lease.key, JSON.stringify(lease));
    if (rec) this.keep(rec.slot, rec);
    return rec !== undefined;
  }

  private async make(slot: number, holder: string, lease: Lease): Promise<boolean> {
    this.claims.set(slot, Infinity);
    let rec: SlotRecord | undefined;
    try {
      rec = await this.store.create(slot, holder, JSON.stringify(lease));
    } finally {
      if (rec) this.claims.set(slot, this.reads); else this.claims.delete(slot);
    }
    if (rec) this.keep(slot, rec);
    return rec !== undefined;
  }

  /** The lowest slot number no record has and this worker is not taking, below `below` (undefined: none). */
  private freeSlot(view: Held[], below: number): number | undefined {
    const taken = new Set([...view.map((h) => h.rec.slot), ...this.claims.keys()]);
    for (let i = 0; i < below; i++) if (!taken.has(i)) return i;
    return undefined;
  }

  async tryReserve(workflowId: string, runId: string): Promise<boolean> {
    for (let round = 0; round < ROUNDS; round++) {
      const view = await this.read();
      const held = view.find((h) => h.lease.key === workflowId);
      if (held) {
        if (held.lease.runId === runId || (await this.put(held, { ...held.lease, runId }))) return true;
        continue;
      }
      if (view.length >= this.capacity) return false;
      const slot = this.freeSlot(view, this.capacity);
      if (slot === undefined) {
        // Full only with the slots this worker is taking: one that another worker won frees its number again.
        if (this.claims.size === 0) return false;
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const lease: Lease = { key: workflowId, workflowId, runId, at: this.now(), by: workerTag() };
      if (await this.make(slot, workflowId, lease)) {
        // Off the reservation's path (a list of the Leases): a duplicate needs a retried attempt beside the first, and
        // every one who looks drops it the same way.
        void this.dropDuplicates(workflowId).catch(() => undefined);
        return true;
      }
    }
    return false;
  }

  /**
   * Two workers that reserved for one episode at once (a retried attempt beside the first) made two records: every
   * one who looks keeps the lowest slot, so they agree on which goes.
   */
  private async dropDuplicates(key: string): Promise<void> {
    const mine = (await this.read()).filter((h) => h.lease.key === key);
    for (const h of mine.slice(1)) if (await this.store.remove(h.rec)) this.keep(h.rec.slot, undefined);
  }

  reservePool(): Promise<boolean> {
    return Promise.resolve(false);
  }

  takePool(): Promise<boolean> {
    return Promise.resolve(false);
  }

  takePooled(): Promise<string | undefined> {
    return Promise.resolve(undefined);
  }

  /**
   * The record this worker wrote last for an episode (first try of a change: no list first; a record that changed
   * since makes the change fail, and the next round reads).
   */
  private known(workflowId: string, runId: string): Held | undefined {
    return this.view.find((h) => h.lease.key === workflowId && h.lease.runId === runId);
  }

  /** As HostSlots.seeded: a slot freed meanwhile is taken again, past the capacity if it must (the pod is being made). */
  async seeded(workflowId: string, runId: string): Promise<void> {
    const known = this.known(workflowId, runId);
    if (known && known.lease.seeded === undefined && (await this.put(known, { ...known.lease, seeded: this.now() }))) return;
    for (let round = 0; round < ROUNDS; round++) {
      const view = await this.read();
      const held = view.find((h) => h.lease.key === workflowId);
      if (held) {
        if (held.lease.runId === runId && held.lease.seeded !== undefined) return;
        if (await this.put(held, { ...held.lease, runId, seeded: held.lease.seeded ?? this.now() })) return;
        continue;
      }
      const lease: Lease = { key: workflowId, workflowId, runId, at: this.now(), by: workerTag(), seeded: this.now() };
      if (await this.make(this.freeSlot(view, view.length + this.claims.size + 1)!, workflowId, lease)) return this.dropDuplicates(workflowId);
    }
    throw new Error(`could not record the seed of ${workflowId} in ${this.where}: the slots changed ${ROUNDS} times while trying`);
  }

  async vacate(workflowId: string, runId: string, names: string[]): Promise<string | undefined> {
    const key = `${workflowId}/${runId}`;
    const known = this.known(workflowId, runId);
    if (known && (await this.put(known, { ...known.lease, key, leaving: this.now(), names }))) return key;
    for (let round = 0; round < ROUNDS; round++) {
      const view = await this.read();
      if (view.some((h) => h.lease.key === key)) return key;
      const held = view.find((h) => h.lease.key === workflowId && h.lease.runId === runId);
      if (!held) return undefined;
      if (await this.put(held, { ...held.lease, key, leaving: this.now(), names })) return key;
    }
    throw new Error(`could not release the slot of ${workflowId} in ${this.where}: the slots changed ${ROUNDS} times while trying`);
  }

  /** Removes the records this worker wrote last for `key`; when it has none, or one changed since, it reads and removes what it finds. */
  async free(key: string): Promise<void> {
    const known = this.view.filter((x) => x.lease.key === key);
    let gone = known.length > 0;
    for (const h of known) if (await this.store.remove(h.rec)) this.keep(h.rec.slot, undefined); else gone = false;
    if (gone) return;
    for (const h of (await this.read()).filter((x) => x.lease.key === key)) if (await this.store.remove(h.rec)) this.keep(h.rec.slot, undefined);
  }

  async changed(maxMs: number): Promise<void> {
    await new Promise((r) => setTimeout(r, Math.min(maxMs, LOOK_EVERY_MS)));
  }

  close(): void {}
}

/** A record's lease; one whose data cannot be read still counts as taken (by its holder, the slot key). */
function parseLease(rec: SlotRecord): Lease {
  try {
    return { ...(JSON.parse(rec.data) as Lease), key: rec.holder };
  } catch {
    return { key: rec.holder, workflowId: rec.holder, runId: '', at: 0, by: '?' };
  }
}
