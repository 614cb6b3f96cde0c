import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { nextWriteDelayMs, PacedWrites, RESULT_PACE } from '../../src/client/harbor-job/result-pace.ts';

// A running batch's result.json is rewritten after new trials, but not once per row: its cost grows with the trials.
describe('result.json pace (src/client/harbor-job/result-pace.ts)', () => {
  it.each([
    { tookMs: 0, sinceMs: 0, delay: 0, why: 'a write that took nothing: the next at once' },
    { tookMs: 10, sinceMs: 0, delay: 10 * RESULT_PACE, why: 'just after a 10 ms write: wait PACE times as long' },
    { tookMs: 10, sinceMs: 15, delay: 10 * RESULT_PACE - 15, why: 'part of the wait already passed' },
    { tookMs: 10, sinceMs: 1000, delay: 0, why: 'long after: at once' },
    { tookMs: 0.3, sinceMs: 0, delay: Math.ceil(0.3 * RESULT_PACE), why: 'whole milliseconds' },
  ])('$why', ({ tookMs, sinceMs, delay }) => {
    expect(nextWriteDelayMs(tookMs, sinceMs)).toBe(delay);
  });

  it('many asks while writes are slow make few writes, and the last write comes after the last ask', async () => {
    const written: number[] = [];
    let asked = 0;
    let queue = Promise.resolve();
    const paced = new PacedWrites((write) => { queue = queue.then(write); });
    const slowWrite = () => {
      const until = performance.now() + 5;
      while (performance.now() < until) { /* a write that takes 5 ms */ }
      written.push(asked);
    };
    for (let i = 0; i < 200; i++) {
      asked++;
      paced.soon(slowWrite);
      await sleep(1);
    }
    // The last paced write comes some time after the last ask: on a loaded machine timers fire late, so wait for it.
    await expect.poll(() => written.at(-1), { timeout: 10_000, interval: 20 }).toBe(200);
    await queue;
    expect(written.length).toBeGreaterThan(1);
    expect(written.length).toBeLessThan(100);
  });

  it('a write made now cancels the one that was due', async () => {
    const written: string[] = [];
    const paced = new PacedWrites((write) => write());
    paced.timed(() => { const until = performance.now() + 20; while (performance.now() < until) { /* slow */ } });
    paced.soon(() => written.push('due'));
    paced.timed(() => written.push('now'));
    await sleep(200);
    expect(written).toEqual(['now']);
  });
});
