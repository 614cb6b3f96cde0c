import { describeCause } from '../sandbox/errors.ts';
import type { RemovalJournal } from './removal-journal.ts';

/** A removal journal entry naming a whole group rather than one container. */
export const GROUP_PREFIX = 'group:';
export const groupRemovalName = (project: string): string => `${GROUP_PREFIX}${project}`;

export interface RemoverOptions {
  /** Removes one sandbox by name; one already gone, or already being removed, resolves. */
  remove(name: string): Promise<unknown>;
  journal: Pick<RemovalJournal, 'add' | 'remove' | 'entries'>;
  /** Wait after the first failed attempt; each next wait is four times longer, up to maxDelayMs. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  warn?: (message: string) => void;
}

const WARN_AT_ATTEMPT = 3;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Removes torn-down episodes' sandboxes in the background, so removal (about 100-175 ms a container)
 * is off the episode's critical path; each episode's `done` (freeing its slot) runs only once its
 * sandboxes are gone, so a host never holds more live containers than slots.
 */
export class Remover {
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly opts: RemoverOptions) {}

  /**
   * Journals `names`, starts removing them and returns at once; `done` runs after they are gone.
   * A key already pending is not removed twice: its new `done` runs after the pending removal.
   */
  schedule(key: string, names: readonly string[], done: () => void = () => undefined): void {
    let removal = this.pending.get(key);
    if (!removal) {
      this.opts.journal.add(key, names);
      removal = this.removeAll(key, names);
      this.pending.set(key, removal);
    }
    void removal.then(done);
  }

  /** Schedules what a worker process that died left in the journal; `doneFor(key)` frees the key's slot after. */
  resume(doneFor: (key: string) => () => void = () => () => undefined): number {
    const entries = this.opts.journal.entries();
    for (const e of entries) this.schedule(e.key, e.names, doneFor(e.key));
    return entries.length;
  }

  /** Whether this remover is removing the key's sandboxes now. */
  has(key: string): boolean {
    return this.pending.has(key);
  }

  /** Waits until nothing is pending or timeoutMs has passed; returns how many keys are still pending. */
  async drain(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => { timer = setTimeout(resolve, deadline - Date.now()); });
      await Promise.race([Promise.all(this.pending.values()), timeout]);
      clearTimeout(timer);
    }
    return this.pending.size;
  }

  get size(): number {
    return this.pending.size;
  }

  private async removeAll(key: string, names: readonly string[]): Promise<void> {
    await Promise.all(names.map((name) => this.removeOne(name)));
    this.opts.journal.remove(key);
    this.pending.delete(key);
  }

  /**
   * Retries until the sandbox is gone, waiting longer each time: giving up would either free a slot
   * whose container still lives or keep it taken for good, and once an engine that stopped
   * answering is back, the removal goes through and the slot comes back.
   */
  private async removeOne(name: string): Promise<void> {
    let delay = this.opts.firstDelayMs ?? 250;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.opts.remove(name);
        return;
      } catch (err) {
        if (attempt === WARN_AT_ATTEMPT) {
          (this.opts.warn ?? console.warn)(`berth worker: removing sandbox ${name} failed ${attempt} times (${describeCause(err)}); ` +
            `still retrying, and its slot stays taken until it is gone. \`berth janitor\` removes it once its episode has closed.`);
        }
        await sleep(delay);
        delay = Math.min(delay * 4, this.opts.maxDelayMs ?? 30_000);
      }
    }
  }
}
