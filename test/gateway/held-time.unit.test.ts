// The time a trainer's drain held a turn's model calls (issue 41, Policy versions and weight sync): the wall time in
// which at least one call waited, an earlier attempt's calls included; and when a turn has spent its own budget.
import { describe, expect, it } from 'vitest';
import { Scope, type CallRecord } from '../../src/gateway/scopes.ts';
import { overdue } from '../../src/agents/moving-deadline.ts';

const call = (heldMs?: number): CallRecord => ({
  at: '2026-12-06T00:00:00Z', protocol: 'openai-chat', model: 'm', status: 200, latencyMs: 1, costUsd: null, stream: false, attempts: 1,
  inputTokens: 1, cachedInputTokens: 0, outputTokens: 1, ...(heldMs !== undefined ? { heldMs } : {}),
});

type Step = ['begin' | 'end', number];

describe('held time of a scope', () => {
  it.each<{ name: string; previous: Array<number | undefined>; steps: Step[]; at: number; held: number }>([
    { name: 'nothing held', previous: [], steps: [], at: 100, held: 0 },
    { name: 'one call held and answered', previous: [], steps: [['begin', 10], ['end', 40]], at: 100, held: 30 },
    { name: 'one call held now', previous: [], steps: [['begin', 10]], at: 100, held: 90 },
    { name: 'two calls held at once count once', previous: [], steps: [['begin', 10], ['begin', 20], ['end', 30], ['end', 50]], at: 100, held: 40 },
    { name: 'two holds apart add up', previous: [], steps: [['begin', 0], ['end', 10], ['begin', 50], ['end', 70]], at: 100, held: 30 },
    { name: 'an earlier attempt\'s calls count', previous: [1000, undefined, 500], steps: [['begin', 0], ['end', 10]], at: 100, held: 1510 },
    { name: 'an end without a begin changes nothing', previous: [], steps: [['end', 5], ['begin', 10], ['end', 20]], at: 100, held: 10 },
  ])('$name', ({ previous, steps, at, held }) => {
    let now = 0;
    const scope = new Scope('t', { label: 'x', upstreams: {}, prices: {}, previousCalls: previous.map(call), now: () => now });
    for (const [what, t] of steps) {
      now = t;
      if (what === 'begin') scope.holdBegins(); else scope.holdEnds();
    }
    now = at;
    expect(scope.heldMs()).toBe(held);
  });
});

describe('a turn\'s moving budget', () => {
  it.each([
    { startedAt: 0, budgetSec: 60, heldMs: 0, now: 59_999, over: false },
    { startedAt: 0, budgetSec: 60, heldMs: 0, now: 60_001, over: true },
    { startedAt: 0, budgetSec: 60, heldMs: 90_000, now: 120_000, over: false },
    { startedAt: 0, budgetSec: 60, heldMs: 90_000, now: 150_001, over: true },
    { startedAt: 5000, budgetSec: 1, heldMs: 0, now: 5500, over: false },
  ])('started $startedAt, $budgetSec s, held $heldMs ms, at $now: overdue $over', ({ over, ...t }) => {
    expect(overdue(t)).toBe(over);
  });
});
