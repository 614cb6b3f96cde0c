// Backoff for a model endpoint: transient statuses (src/outcomes/model-status.ts) and dropped connections are
// retried, honouring Retry-After.
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Attempts in all, the first included. Default 6. */
  maxAttempts?: number;
  /** First backoff; doubles each attempt, with jitter. Default 1000 ms. */
  baseDelayMs?: number;
  /** Longest backoff without a Retry-After. Default 30 s. */
  maxDelayMs?: number;
  /** Longest wait a Retry-After may ask for. Default 120 s. */
  maxRetryAfterMs?: number;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxAttempts: 6,
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The wait before attempt `attempt + 1` (attempt counts from 1). */
export function backoffMs(attempt: number, retryAfter: number | null, opts: Required<RetryOptions>, random = Math.random): number {
  if (retryAfter !== null) return Math.min(retryAfter, opts.maxRetryAfterMs);
  const exp = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(exp * (0.5 + random() / 2));
}

export async function wait(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, { signal });
}
