import { ApplicationFailure } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withinLimit } from '../../src/activities/seed-then-agent.ts';

// The verification's own time limit inside seedAgentVerifyTurn (docs/performance-notes.md, One activity for a
// single-step episode): what a verifyTurn past its start-to-close timeout came to, retried then masked.
describe('withinLimit', () => {
  beforeEach(() => { vi.useFakeTimers(); });
  afterEach(() => { vi.useRealTimers(); });

  /** A run that ends only when its signal aborts, rejecting with the abort's reason; `seen` keeps the signal. */
  const hanging = (seen: AbortSignal[]) => (signal: AbortSignal) => new Promise<string>((_, reject) => {
    seen.push(signal);
    signal.addEventListener('abort', () => reject(new Error('stopped')));
  });

  it('gives back what the run gives within the limit, its signal never aborted', async () => {
    const seen: AbortSignal[] = [];
    const done = withinLimit(40, new AbortController().signal, async (signal) => { seen.push(signal); return 'verified'; });
    await expect(done).resolves.toBe('verified');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(seen[0]!.aborted).toBe(false);
  });

  it('past the limit: the run is stopped and the attempt fails as a retryable provider_unavailable naming the limit', async () => {
    const seen: AbortSignal[] = [];
    const done = withinLimit(40, new AbortController().signal, hanging(seen));
    const failure = done.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(39_999);
    expect(seen[0]!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await failure;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'provider_unavailable', nonRetryable: false });
    expect((err as Error).message).toMatch(/past its limit of 40 s/);
    expect(seen[0]!.aborted).toBe(true);
  });

  it('an activity cancelled meanwhile stops the run with its own reason, the limit not reached', async () => {
    const seen: AbortSignal[] = [];
    const outer = new AbortController();
    const done = withinLimit(40, outer.signal, hanging(seen));
    const failure = done.catch((e: unknown) => e);
    outer.abort(new Error('cancelled'));
    expect(((await failure) as Error).message).toBe('stopped');
    expect(seen[0]!.reason).toEqual(new Error('cancelled'));
  });

  it('without a limit (a plan from before verifications had their own): the activity signal itself', async () => {
    const outer = new AbortController();
    let given: AbortSignal | undefined;
    await withinLimit(undefined, outer.signal, async (signal) => { given = signal; });
    expect(given).toBe(outer.signal);
  });
});
