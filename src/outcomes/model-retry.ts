// How every caller of a model endpoint retries (the openai harness's call loop and the model gateway): which answers
// are tried again, how long to wait, and how far a Retry-After is honoured. Pure: the callers sleep.
import { isTransientModelStatus } from './model-status.ts';

export interface ModelRetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff; doubles each attempt, with jitter (half to all of it). */
  baseDelayMs: number;
  /** Longest backoff without a Retry-After. */
  maxDelayMs: number;
  /** Longest wait a Retry-After may ask for; a longer one is cut to this. */
  maxRetryAfterMs: number;
}

export const MODEL_RETRY: Readonly<ModelRetryPolicy> = {
  maxAttempts: 6,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/** Retry-After as milliseconds: delta-seconds or an HTTP date (RFC 9110 § 10.2.3); null when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // An HTTP-date names its day and month; a bare number that is not delta-seconds ("-1", "1e3") is unreadable.
  const at = /[a-z]/i.test(v) ? Date.parse(v) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Whether attempt `attempt` (from 1) is tried again: its answer was a transient status (429, 408, 5xx) or there was
 * no answer at all (`status` null: a refused or dropped connection), and attempts are left.
 */
export function retriesAfter(attempt: number, status: number | null, policy: Readonly<ModelRetryPolicy>): boolean {
  return attempt < policy.maxAttempts && (status === null || isTransientModelStatus(status));
}

/** The wait before attempt `attempt + 1`: the Retry-After (at most maxRetryAfterMs), else capped exponential backoff. */
export function retryDelayMs(attempt: number, retryAfterMs: number | null, policy: Readonly<ModelRetryPolicy>, random = Math.random): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exp * (0.5 + random() / 2));
}
