/** Sandbox slots of this worker (DESIGN.md section 7, Workers and hosts). Reserving is idempotent per episode. */
export class Slots {
  private readonly held = new Set<string>();
  constructor(readonly capacity: number) {}

  tryReserve(episodeId: string): boolean {
    if (this.held.has(episodeId)) return true;
    if (this.held.size >= this.capacity) return false;
    this.held.add(episodeId);
    return true;
  }

  release(episodeId: string): void {
    this.held.delete(episodeId);
  }

  get inUse(): number {
    return this.held.size;
  }
}
