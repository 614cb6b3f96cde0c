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
  version: string;
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

/** A remote state, re-read every `refreshMs` while anyone holds it; a failed read keeps the last state. */
class PolledPolicyState extends WaitingSource {
  private timer: ReturnType<typeof setTimeout> | undefined;
  users = 0;
  lastError: unknown = null;

  constructor(private readonly read: () => Promise<PolicyState>, initial: PolicyState, private readonly refreshMs: number, private readonly onIdle: () => void) {
    super(initial);
  }

  start(): void {
    if (this.timer) return;
    const tick = async (): Promise<void> => {
      try {
        this.update(await this.read());
        this.lastError = null;
      } catch (err) {
        this.lastError = err;
      }
      if (this.users > 0) this.timer = setTimeout(() => { void tick(); }, this.refreshMs);
    };
    this.timer = setTimeout(() => { void tick(); }, 0);
  }

  release(): void {
    this.users = Math.max(0, this.users - 1);
    if (this.users > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.onIdle();
  }
}

/** One refresh loop per remote state (`key`: e.g. the run workflow's id) however many scopes use it. */
export class PolicyStateHub {
  private readonly sources = new Map<string, PolledPolicyState>();

  constructor(private readonly refreshMs = POLICY_REFRESH_MS) {}

  acquire(key: string, read: () => Promise<PolicyState>, initial: PolicyState): PolicyStateSource {
    let s = this.sources.get(key);
    if (!s) {
      s = new PolledPolicyState(read, initial, this.refreshMs, () => this.sources.delete(key));
      this.sources.set(key, s);
    }
    s.users++;
    s.start();
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
}
