import { condition } from '@temporalio/workflow';

/**
 * Workflow time between the starts of two writes of a batch's job files while it runs: a write reads every closed
 * episode's row, so one per close would cost a big batch time in the square of its episodes.
 */
export const JOB_FILES_EVERY_SEC = 30;

export interface JobFilesPace {
  /** Writes the files with `closed` episodes counted. */
  write: (closed: number) => Promise<void>;
  /** The episodes the batch has counted closed. */
  closed: () => number;
  /** The batch's last write is due (every episode started and freed its slot): it writes the closes itself. */
  lastDue: () => boolean;
  everyMs: number;
  /** A write this run began already (after a continue-as-new), counted as one. */
  inFlight?: Promise<void>;
}

/**
 * A batch's job files written while it runs (patch batch-job-files-as-it-goes), workflow code: a write soon after
 * episodes close, one at a time, the starts at least `everyMs` of workflow time apart (one timer per write, not per
 * episode); the closes during that wait go in the next write. `stop()` ends it once the write in flight (if any, the
 * run's first one too) has ended, so the batch's last write, or its continue-as-new, comes after every other.
 */
export class JobFilesAsItGoes {
  private stopped = false;
  private readonly ended: Promise<void>;

  constructor(pace: JobFilesPace) {
    this.ended = this.writeAsTheyClose(pace);
  }

  private async writeAsTheyClose({ write, closed, lastDue, everyMs, inFlight }: JobFilesPace): Promise<void> {
    let written = closed();
    let lastStart = inFlight ? Date.now() : -Infinity;
    await inFlight;
    for (;;) {
      await condition(() => this.stopped || closed() > written);
      const wait = lastStart + everyMs - Date.now();
      if (!this.stopped && wait > 0) await condition(() => this.stopped, wait);
      if (this.stopped || lastDue()) return;
      written = closed();
      lastStart = Date.now();
      await write(written);
    }
  }

  /** No write starts after this; resolves once the one in flight has ended. */
  stop(): Promise<void> {
    this.stopped = true;
    return this.ended;
  }
}
