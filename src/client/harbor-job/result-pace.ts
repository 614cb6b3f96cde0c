// How soon a running batch's result.json is rewritten after new trials.
//
// Rewriting it costs time in proportion to the trials (stats over all of them, the file written whole): once per
// row, a batch of n rows costs n², and at ten thousand rows the client would spend minutes on it. So a write waits
// until PACE times as long as the last one took has passed since it ended: a small job's result.json follows each
// trial within milliseconds, and a large one's writes never take more than 1 / (PACE + 1) of the client's time.

export const RESULT_PACE = 4;

/** Milliseconds to wait before the next write, given how long the last took and how long ago it ended. Pure. */
export function nextWriteDelayMs(lastTookMs: number, sinceLastEndedMs: number): number {
  return Math.max(0, Math.ceil(RESULT_PACE * lastTookMs - sinceLastEndedMs));
}

/** One file's paced rewrites: `soon` asks for one, and a write already due covers every ask before it runs. */
export class PacedWrites {
  private due: NodeJS.Timeout | undefined;
  private last = { endedAt: 0, tookMs: 0 };

  /** `enqueue` runs a write in the caller's order of file work (after the trial folders already under way). */
  constructor(private readonly enqueue: (write: () => void) => void) {}

  soon(write: () => void): void {
    if (this.due) return;
    this.due = setTimeout(() => {
      this.due = undefined;
      this.enqueue(() => this.timed(write));
    }, nextWriteDelayMs(this.last.tookMs, Date.now() - this.last.endedAt));
  }

  /** A write made now by the caller, counted for the pace; one that was due is no longer needed. */
  timed(write: () => void): void {
    this.cancel();
    const began = performance.now();
    try {
      write();
    } finally {
      this.last = { endedAt: Date.now(), tookMs: performance.now() - began };
    }
  }

  cancel(): void {
    clearTimeout(this.due);
    this.due = undefined;
  }
}
