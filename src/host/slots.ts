import { watch, type FSWatcher, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname } from 'node:path';
import { withLockFile } from '../config/lock-file.ts';
import { readSlots, type Lease, type SlotsView } from '../config/slots.ts';
import { poolLeaseToTake } from './pool-take-over.ts';
import type { SandboxSlots } from './sandbox-slots.ts';


const LOCK = { staleMs: 10_000, pollMs: 5 };

export const workerTag = (): string => `${hostname()}:${process.pid}`;

/**
 * The sandbox slots of one host's queue (docs/design.md section 7, Slots): a small file under BERTH_HOME that every
 * worker process polling that queue reads and changes under a lock file, so a slot reserved by one process is
 * freed by whichever process tears its episode down. Reserving is idempotent per episode.
 */
export class HostSlots implements SandboxSlots {
  private watcher: FSWatcher | undefined;
  private wake = newWake();

  constructor(readonly file: string, readonly capacity: number) {}

  /** The leases as they are now (no lock: the file is replaced whole, never written in place). */
  leases(): Lease[] {
    return readSlots(this.file).leases;
  }

  get inUse(): number {
    return this.leases().length;
  }

  get where(): string {
    return this.file;
  }

  /** Nothing to read ahead: leases() reads the file each time. */
  refresh(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * True when the episode holds a slot (already, or now). A full host gives a waiting episode the slot of a pooled
   * sandbox (poolLeaseToTake: one seeded for this episode first, then one of task `task` it may claim): the pool never
   * keeps an episode waiting, and the episode's seed claims that sandbox or removes it.
   */
  async tryReserve(workflowId: string, runId: string, task?: string): Promise<boolean> {
    const mine = (l: Lease) => l.key === workflowId;
    const now = this.leases();
    if (!now.some(mine) && now.length >= this.capacity && !now.some((l) => l.pool)) return false;
    return this.change((leases) => {
      const held = leases.find(mine);
      if (held) {
        held.runId = runId;
        return true;
      }
      const lease: Lease = { key: workflowId, workflowId, runId, at: Date.now(), by: workerTag() };
      if (leases.length < this.capacity) {
        leases.push(lease);
        return true;
      }
      const taken = poolLeaseToTake(leases, { workflowId, ...(task !== undefined ? { task } : {}) });
      if (!taken) return false;
      leases.splice(leases.indexOf(taken), 1, { ...lease, pooled: taken.pool!.name });
      return true;
    });
  }

  /** A slot for a pooled sandbox, only when one is free. */
  async reservePool(pool: NonNullable<Lease['pool']>): Promise<boolean> {
    const key = `pool/${pool.name}`;
    if (this.inUse >= this.capacity) return false;
    return this.change((leases) => {
      if (leases.length >= this.capacity) return false;
      leases.push({ key, workflowId: key, runId: '', at: Date.now(), by: workerTag(), pool });
      return true;
    });
  }

  /**
   * Takes a pooled sandbox's slot away (its claim, or its removal once gone); false when it no longer holds one.
   * Claimed by episode `claimedBy`, the sandbox is named in that episode's lease (`pooled`) until the claim ends
   * (takePooled): a worker that dies mid-claim leaves it to the episode's next seed attempt or its teardown.
   */
  async takePool(name: string, claimedBy?: string): Promise<boolean> {
    return this.change((leases) => {
      const i = leases.findIndex((l) => l.pool?.name === name);
      if (i < 0) return false;
      leases.splice(i, 1);
      const episode = claimedBy === undefined ? undefined : leases.find((l) => l.key === claimedBy);
      if (episode) episode.pooled = name;
      return true;
    });
  }

  /** The pooled sandbox the episode's reservation took over, handed out once. */
  async takePooled(workflowId: string): Promise<string | undefined> {
    if (!this.leases().some((l) => l.key === workflowId && l.pooled)) return undefined;
    return this.change((leases) => {
      const held = leases.find((l) => l.key === workflowId);
      const name = held?.pooled;
      if (held) delete held.pooled;
      return name;
    });
  }

  /**
   * The episode's seed started here. A lease freed meanwhile (it looked never seeded) is taken again, even past
   * the capacity: the sandbox is being made, and the count must say so.
   */
  async seeded(workflowId: string, runId: string): Promise<void> {
    await this.change((leases) => {
      const held = leases.find((l) => l.key === workflowId);
      if (held) {
        held.runId = runId;
        held.seeded ??= Date.now();
      } else {
        leases.push({ key: workflowId, workflowId, runId, at: Date.now(), by: workerTag(), seeded: Date.now() });
      }
    });
  }

  /**
   * The episode is torn down: its slot stays taken, as leaving, until `free(key)` once `names` are gone. The slot
   * no longer answers to the episode's id, so a Reset run of the same workflow reserves a slot of its own.
   * Returns the leaving key, or undefined when the episode holds no slot here. A pooled sandbox the reservation
   * took over and no seed claimed is added to `names`, so the caller removes it with the episode's.
   */
  async vacate(workflowId: string, runId: string, names: string[]): Promise<string | undefined> {
    const key = `${workflowId}/${runId}`;
    return this.change((leases) => {
      if (leases.some((l) => l.key === key)) return key;
      const held = leases.find((l) => l.key === workflowId && l.runId === runId);
      if (!held) return undefined;
      // A pooled sandbox the reservation took over and no seed claimed goes with the episode's (added to `names`).
      if (held.pooled !== undefined && !names.includes(held.pooled)) names.push(held.pooled);
      delete held.pooled;
      Object.assign(held, { key, leaving: Date.now(), names });
      return key;
    });
  }

  /** Frees a slot by its key; freeing one already free does nothing. */
  async free(key: string): Promise<void> {
    await this.change((leases) => {
      const i = leases.findIndex((l) => l.key === key);
      if (i >= 0) leases.splice(i, 1);
    });
  }

  /** Resolves when the slots file next changes (in any process), or after maxMs. */
  async changed(maxMs: number): Promise<void> {
    this.watch();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.wake.promise, new Promise<void>((r) => { timer = setTimeout(r, maxMs); })]);
    clearTimeout(timer);
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  private watch(): void {
    if (this.watcher) return;
    mkdirSync(dirname(this.file), { recursive: true });
    try {
      this.watcher = watch(dirname(this.file), (_event, name) => {
        if (name === null || name === basename(this.file)) this.changedNow();
      });
      this.watcher.unref();
      this.watcher.on('error', () => this.close());
    } catch {
      // No watcher: waiters look again after their bounded wait.
    }
  }

  private changedNow(): void {
    this.wake.resolve();
    this.wake = newWake();
  }

  private async change<T>(fn: (leases: Lease[]) => T): Promise<T> {
    mkdirSync(dirname(this.file), { recursive: true });
    return withLockFile(`${this.file}.lock`, () => {
      const leases = this.leases();
      const before = JSON.stringify(leases);
      const result = fn(leases);
      if (JSON.stringify(leases) !== before) {
        const tmp = `${this.file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify({ capacity: this.capacity, leases } satisfies SlotsView));
        renameSync(tmp, this.file);
        this.changedNow();
      }
      return result;
    }, LOCK);
  }
}

function newWake(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}
