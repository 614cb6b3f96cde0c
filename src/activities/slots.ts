/** Sandbox slots of this worker (DESIGN.md section 7, Workers and hosts). Reserving is idempotent per episode. */
export class Slots {
  private readonly held = new Set<string>();
  /** Slots of torn-down episodes whose sandboxes are still being removed. */
  private leaving = 0;
  private wake = newWake();
  constructor(readonly capacity: number) {}

  /** Resolves when a slot is next freed (one promise shared by every waiter until then). */
  nextFree(): Promise<void> {
    return this.wake.promise;
  }

  private freed(): void {
    this.wake.resolve();
    this.wake = newWake();
  }

  tryReserve(episodeId: string): boolean {
    if (this.held.has(episodeId)) return true;
    if (this.inUse >= this.capacity) return false;
    this.held.add(episodeId);
    return true;
  }

  /**
   * The episode is torn down: its slot stays taken until the returned function frees it (once,
   * however often it is called). The slot no longer answers to the episode's id, so a Reset run of
   * the same workflow reserves a slot of its own. An episode holding no slot here gets a no-op.
   */
  vacate(episodeId: string): () => void {
    if (!this.held.delete(episodeId)) return () => undefined;
    this.leaving++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.leaving--;
      this.freed();
    };
  }

  get inUse(): number {
    return this.held.size + this.leaving;
  }
}

function newWake(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}
