// Per-episode tokens: what a sandbox presents instead of a key. A token names its scope (one agent turn):
// the upstreams it may reach, the price table, the episode's limits, and where its calls are recorded.
// A token works from register() until revoke(); after that the gateway refuses it.
import type { PriceTable } from './prices.ts';
import type { TrainingScope } from './training.ts';
import type { Provider, Upstream } from './upstreams.ts';
import type { CallRecord } from './usage.ts';

export type { CallRecord };

export type LimitKind = 'max_tokens' | 'max_cost';

export interface ScopeLimits {
  /** Input plus output tokens over the whole episode. */
  maxTokens?: number;
  maxCostUsd?: number;
}

export interface ScopeOptions {
  /** For messages: the episode and turn. */
  label: string;
  upstreams: Partial<Record<Provider, Upstream>>;
  prices: PriceTable;
  limits?: ScopeLimits;
  /** What earlier turns of the episode already spent. */
  spentBefore?: { tokens: number; costUsd: number };
  /** Calls an earlier attempt of the same turn recorded (counted, not recorded again). */
  previousCalls?: readonly CallRecord[];
  /** Each call, as it ends. */
  onCall?: (call: CallRecord) => void;
  /** Once, when the episode's spending passes a limit. */
  onLimit?: (kind: LimitKind, reason: string) => void;
  /** Training mode: every call goes to the trainer's policy and leaves a token record (training.ts). */
  training?: TrainingScope;
  /** Milliseconds on a monotonic clock (tests give their own). */
  now?: () => number;
}

export class Scope {
  readonly calls: CallRecord[] = [];
  stopped: { kind: LimitKind; reason: string } | null = null;
  /** Set when the upstream said the conversation no longer fits the model's context window. */
  contextOverflow: string | null = null;

  /** Calls held by a drain right now, since when (at least one held), and the time held before that. */
  private holding = 0;
  private holdingSince = 0;
  private heldBefore: number;

  constructor(readonly token: string, readonly opts: ScopeOptions) {
    this.calls.push(...(opts.previousCalls ?? []));
    this.heldBefore = (opts.previousCalls ?? []).reduce((sum, c) => sum + (c.heldMs ?? 0), 0);
    this.checkLimits();
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : performance.now();
  }

  /** A call of this scope starts waiting for the trainer's resume (training.ts). */
  holdBegins(): void {
    if (this.holding++ === 0) this.holdingSince = this.now();
  }

  holdEnds(): void {
    if (this.holding === 0) return;
    if (--this.holding === 0) this.heldBefore += this.now() - this.holdingSince;
  }

  /**
   * The wall time in which at least one of the turn's calls was held by a drain, the calls held now and those of
   * an earlier attempt of the turn included: time the trainer took, which the turn's budget does not pay for.
   */
  heldMs(): number {
    return this.heldBefore + (this.holding > 0 ? this.now() - this.holdingSince : 0);
  }

  get tokensSpent(): number {
    return (this.opts.spentBefore?.tokens ?? 0) + this.calls.reduce((s, c) => s + c.inputTokens + c.outputTokens, 0);
  }

  get costSpent(): number {
    return (this.opts.spentBefore?.costUsd ?? 0) + this.calls.reduce((s, c) => s + (c.costUsd ?? 0), 0);
  }

  record(call: CallRecord): void {
    this.calls.push(call);
    this.opts.onCall?.(call);
    this.checkLimits();
  }

  private checkLimits(): void {
    if (this.stopped) return;
    const { maxTokens, maxCostUsd } = this.opts.limits ?? {};
    if (maxTokens !== undefined && this.tokensSpent > maxTokens) {
      this.stop('max_tokens', `the episode used ${this.tokensSpent} model tokens, past its limit of ${maxTokens} (--max-tokens)`);
    } else if (maxCostUsd !== undefined && this.costSpent > maxCostUsd) {
      this.stop('max_cost', `the episode's model calls cost $${this.costSpent.toFixed(4)}, past its limit of $${maxCostUsd} (--max-cost)`);
    }
  }

  private stop(kind: LimitKind, reason: string): void {
    this.stopped = { kind, reason };
    this.opts.onLimit?.(kind, reason);
  }
}
