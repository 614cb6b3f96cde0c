// The one retry policy of every model call (src/outcomes/model-retry.ts): the openai harness's loop and the model
// gateway both decide and wait by it. Retry-After is RFC 9110 § 10.2.3 (delta-seconds or an HTTP-date).
import { describe, expect, it } from 'vitest';
import { MODEL_RETRY, parseRetryAfter, retriesAfter, retryDelayMs, type ModelRetryPolicy } from '../../src/outcomes/index.ts';

describe('Retry-After', () => {
  const now = Date.parse('2026-11-30T05:00:00Z');
  it.each([
    ['0', 0],
    ['2', 2000],
    ['1.5', 1500],
    [' 3 ', 3000],
    ['', null],
    ['   ', null],
    [null, null],
    [undefined, null],
    ['soon', null],
    ['-1', null],
    ['1e3', null],
    ['0x10', null],
    ['Mon, 30 Nov 2026 05:00:03 GMT', 3000],
    ['Mon, 30 Nov 2026 04:59:00 GMT', 0],
  ] as const)('%j → %j ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });
});

describe('which attempts are tried again', () => {
  const policy: ModelRetryPolicy = { ...MODEL_RETRY, maxAttempts: 3 };
  it.each([
    [1, 429, true], [1, 408, true], [1, 500, true], [1, 503, true], [1, 529, true],
    [1, null, true],
    [2, 429, true],
    [3, 429, false], [3, null, false],
    [1, 400, false], [1, 401, false], [1, 403, false], [1, 404, false], [1, 422, false], [1, 200, false],
  ] as const)('attempt %i answered %j: again %s', (attempt, status, again) => {
    expect(retriesAfter(attempt, status, policy)).toBe(again);
  });

  it('defaults: six attempts in all', () => {
    expect(retriesAfter(5, 429, MODEL_RETRY)).toBe(true);
    expect(retriesAfter(6, 429, MODEL_RETRY)).toBe(false);
  });
});

describe('how long to wait', () => {
  it.each([
    ['a Retry-After is honoured as asked', 1, 5000, 0.5, 5000],
    ['a Retry-After longer than the backoff cap is still honoured', 1, 60_000, 0.5, 60_000],
    ['a Retry-After past its own cap is cut to it', 1, 10_000_000, 0.5, MODEL_RETRY.maxRetryAfterMs],
    ['Retry-After: 0 retries at once', 4, 0, 0.5, 0],
    ['no Retry-After: the first backoff, jitter high', 1, null, 1, 1000],
    ['no Retry-After: doubles each attempt', 3, null, 1, 4000],
    ['no Retry-After: jitter takes it down to half', 3, null, 0, 2000],
    ['no Retry-After: capped', 20, null, 1, MODEL_RETRY.maxDelayMs],
  ] as const)('%s', (_name, attempt, retryAfter, random, ms) => {
    expect(retryDelayMs(attempt, retryAfter, MODEL_RETRY, () => random)).toBe(ms);
  });

  it('a shortened policy (tests) scales every figure', () => {
    const fast: ModelRetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 50 };
    expect(retryDelayMs(10, null, fast, () => 1)).toBe(5);
    expect(retryDelayMs(1, 2000, fast)).toBe(50);
  });
});
