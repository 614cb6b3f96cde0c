/** Sandbox slots of this worker (DESIGN.md section 7, Workers and hosts). Reserving is idempotent per episode. */
export class Slots {
  private readonly held = new Set<string>();
  /** Slots of torn-down episodes whose sandboxes are still being removed. */
  private leaving = 0;
  constructor(readonly capacity: number) {}

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
    };
  }

  get inUse(): number {
    return this.held.size + this.leaving;
  }
}
