/** A service a worker starts on first use (its model gateway, its egress proxy); a failed start is tried again by the next caller. */
export class OnDemand<T> {
  #started: Promise<T> | undefined;

  constructor(private readonly start: () => Promise<T>) {}

  get(): Promise<T> {
    if (!this.#started) {
      const started = this.start();
      this.#started = started;
      started.catch(() => { if (this.#started === started) this.#started = undefined; });
    }
    return this.#started;
  }

  /** What was started, if anything, now forgotten: the caller stops it. */
  take(): Promise<T> | undefined {
    const started = this.#started;
    this.#started = undefined;
    return started;
  }
}
