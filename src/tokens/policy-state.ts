// The policy a trainer serves: its version, endpoint, sampling, and whether new calls are held (drain) while it
// swaps weights. The gateway reads it for every call from a PolicyStateSource; the source that follows a remote
// state (the serve process's run workflow) refreshes in the background, so a call never waits on the read, and one
// refresh loop serves every scope of the same run on a worker.
import type { Sampling } from './vllm.ts';

export interface PolicyEndpoint {
  /** Without /v1: the gateway appends /v1/chat/completions. */
  baseUrl: string;
  model: string;
  /** An environment variable of the worker holding the endpoint's key; none sends no key. */
  apiKeyVar?: string;
}

export interface PolicyState {
  version: number;
  endpoint: PolicyEndpoint;
  sampling: Sampling;
  draining: boolean;
}

/** How often a remote state is re-read while a scope uses it. */
export const POLICY_REFRESH_MS = 100;
/** After a change is made, how long until every gateway has it (a refresh, plus a read's time): drain waits this long. */
export const DRAIN_SETTLE_MS = 250;

export interface PolicyStateSource {
  /** The state as last known. */
  current(): PolicyState;
  /** The state once new calls may go (at once unless draining); rejects when `signal` aborts. */
  whenOpen(signal?: AbortSignal): Promise<PolicyState>;
  /** This user is done with it. */
  release(): void;
}

type Waiter = { resolve: (s: PolicyState) => void; reject: (e: unknown) => void };

abstract class WaitingSource implements PolicyStateSource {
  private waiters: Waiter[] = [];
  constructor(protected state: PolicyState) {}

  current(): PolicyState {
    return this.state;
  }

  whenOpen(signal?: AbortSignal): Promise<PolicyState> {
    if (!this.state.draining) return Promise.resolve(this.state);
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject };
      this.waiters.push(w);
      signal?.addEventListener('abort', () => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(signal.reason);
      }, { once: true });
    });
  }

  protected update(state: PolicyState): void {
    this.state = state;
    if (state.draining) return;
    const ready = this.waiters;
    this.waiters = [];
    for (const w of ready) w.resolve(state);
  }

  abstract release(): void;
}

/** A state set in this process (tests, a fixed policy, a trainer in the worker's own process). */
export class LocalPolicyState extends WaitingSource {
  set(change: Partial<PolicyState>): void {
    this.update({ ...this.state, ...change });
  }

  drain(): void {
    this.set({ draining: true });
  }

  resume(): void {
    this.set({ draining: false });
  }

  release(): void {}
}

/**
 * A remote state, re-read every `refreshMs` while anyone holds it and `lingerMs` after (an agent's next call comes
 * soon); a failed read keeps the last state. Until the first read has answered, callers wait for it.
 */
class PolledPolicyState extends WaitingSource {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private idleSince: number | null = null;
  users = 0;
  lastError: unknown = null;
  private readonly firstRead: Promise<void>;
  private markRead: () => void = () => undefined;

  constructor(
    private readonly read: () => Promise<PolicyState>, initial: PolicyState,
    private readonly timing: { refreshMs: number; lingerMs: number }, private readonly onIdle: () => void,
  ) {
    super(initial);
    this.firstRead = new Promise((r) => { this.markRead = r; });
    void this.tick();
  }

  private async tick(): Promise<void> {
    try {
      this.update(await this.read());
      this.lastError = null;
    } catch (err) {
      this.lastError = err;
    }
    this.markRead();
    if (this.users === 0 && this.idleSince !== null && Date.now() - this.idleSince >= this.timing.lingerMs) {
      this.timer = undefined;
      this.onIdle();
      return;
    }
    this.timer = setTimeout(() => { void this.tick(); }, this.timing.refreshMs);
    this.timer.unref();
  }

  override async whenOpen(signal?: AbortSignal): Promise<PolicyState> {
    await this.firstRead;
    return super.whenOpen(signal);
  }

  acquire(): void {
    this.users++;
    this.idleSince = null;
  }

  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users === 0) this.idleSince = Date.now();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** One refresh loop per remote state (`key`: e.g. the run workflow's id) however many scopes use it. */
export class PolicyStateHub {
  private readonly sources = new Map<string, PolledPolicyState>();

  constructor(private readonly timing = { refreshMs: POLICY_REFRESH_MS, lingerMs: 30_000 }) {}

  acquire(key: string, read: () => Promise<PolicyState>, initial: PolicyState): PolicyStateSource {
    let s = this.sources.get(key);
    if (!s) {
      s = new PolledPolicyState(read, initial, this.timing, () => this.sources.delete(key));
      this.sources.set(key, s);
    }
    s.acquire();
    const source = s;
    let released = false;
    return {
      current: () => source.current(),
      whenOpen: (signal) => source.whenOpen(signal),
      release: () => { if (!released) { released = true; source.release(); } },
    };
  }

  get size(): number {
    return this.sources.size;
  }

  /** Stops every refresh loop (the worker is stopping). */
  close(): void {
    for (const s of this.sources.values()) s.stop();
    this.sources.clear();
  }
}
