import { describe, expect, it } from 'vitest';
import { countsOf, failureKinds, histogramBins, median, passAtKTable, timingStats } from '../../src/client/report-stats.ts';
import { row, syntheticBatch } from './fixtures.ts';

const rewards = (task: string, values: Array<number | 'masked'>) =>
  values.map((v, i) => (v === 'masked'
    ? row({ task_id: task, repeat: i + 1, reward: null, mask_sample: true, failure_kind: 'provider_unavailable' })
    : row({ task_id: task, repeat: i + 1, reward: v })));

describe('pass@k per task (unbiased estimator, success = reward ≥ 1, masked rows left out)', () => {
  const cases: Array<{ name: string; values: Array<number | 'masked'>; n: number; c: number; expected: Array<number | null> }> = [
    { name: 'all succeed', values: [1, 1, 1], n: 3, c: 3, expected: [1, 1, 1] },
    { name: 'none succeed', values: [0, 0, 0], n: 3, c: 0, expected: [0, 0, 0] },
    { name: 'one of three', values: [1, 0, 0], n: 3, c: 1, expected: [1 / 3, 2 / 3, 1] },
    { name: 'two of three', values: [1, 0, 1], n: 3, c: 2, expected: [2 / 3, 1, 1] },
    { name: 'partial credit is not success', values: [0.99, 0.5, 1], n: 3, c: 1, expected: [1 / 3, 2 / 3, 1] },
    { name: 'above 1 is success', values: [2, 0, 0, 0], n: 4, c: 1, expected: [0.25, 0.5, 0.75, 1] },
    { name: 'masked rows shrink n', values: [1, 'masked', 0], n: 2, c: 1, expected: [0.5, 1, null] },
    { name: 'all masked', values: ['masked', 'masked'], n: 0, c: 0, expected: [null, null] },
  ];
  it.each(cases)('$name', ({ values, n, c, expected }) => {
    const t = passAtKTable(rewards('t', values));
    expect(t.tasks).toHaveLength(1);
    expect(t.tasks[0]).toMatchObject({ n, c });
    expect(t.tasks[0]!.passAtK).toHaveLength(expected.length);
    t.tasks[0]!.passAtK.forEach((v, i) => (expected[i] === null ? expect(v).toBeNull() : expect(v).toBeCloseTo(expected[i]!, 12)));
  });

  it('uses the newest attempt of each (task, repeat)', () => {
    const t = passAtKTable([
      row({ task_id: 't', repeat: 1, attempt: 1, reward: 0 }),
      row({ task_id: 't', repeat: 1, attempt: 3, reward: 1 }),
      row({ task_id: 't', repeat: 1, attempt: 2, reward: null, mask_sample: true }),
    ]);
    expect(t.tasks[0]).toMatchObject({ n: 1, c: 1, passAtK: [1] });
    expect(t.tasks[0]!.byRepeat.get(1)!.attempt).toBe(3);
  });

  it('the overall row averages the tasks with at least k unmasked repeats', () => {
    const { rows } = syntheticBatch();
    const t = passAtKTable(rows);
    expect(t.repeats).toEqual([1, 2, 3]);
    expect(t.maxK).toBe(3);
    expect(t.tasks.map((x) => [x.taskId, x.n, x.c])).toEqual([['alpha', 3, 2], ['beta', 2, 1], ['gamma', 2, 1]]);
    expect(t.overall[0]!.value).toBeCloseTo((2 / 3 + 0.5 + 0.5) / 3, 12);
    expect(t.overall[0]!.tasks).toBe(3);
    expect(t.overall[1]).toMatchObject({ k: 2, value: 1, tasks: 3 });
    expect(t.overall[2]).toMatchObject({ k: 3, value: 1, tasks: 1 });
  });

  it('no rows: an empty table', () => {
    expect(passAtKTable([])).toEqual({ repeats: [], maxK: 0, tasks: [], overall: [] });
  });
});

describe('histogram bins', () => {
  const cases: Array<{ name: string; values: number[]; bins?: number; counts: number[]; lo?: number; hi?: number }> = [
    { name: 'binary rewards land in the first and last bins', values: [0, 1, 1, 0, 1], counts: [2, 0, 0, 0, 0, 0, 0, 0, 0, 3] },
    { name: 'bin edges belong to the bin above (0.3 is not in the 0.2 bin)', values: [0.1, 0.2, 0.3, 0.7, 0.9], counts: [0, 1, 1, 1, 0, 0, 0, 1, 0, 1] },
    { name: 'the upper edge is in the last bin', values: [1], bins: 4, counts: [0, 0, 0, 1] },
    { name: 'just below an edge', values: [0.2499, 0.25], bins: 4, counts: [1, 1, 0, 0] },
    { name: 'rewards above 1 widen the range', values: [0, 1.5, 2, 4], bins: 4, counts: [1, 1, 1, 1], lo: 0, hi: 4 },
    { name: 'negative rewards widen the range', values: [-1, 0, 1], bins: 2, counts: [1, 2], lo: -1, hi: 1 },
    { name: 'no values: empty bins over [0, 1]', values: [], bins: 2, counts: [0, 0], lo: 0, hi: 1 },
  ];
  it.each(cases)('$name', ({ values, bins, counts, lo, hi }) => {
    const b = histogramBins(values, bins);
    expect(b.map((x) => x.count)).toEqual(counts);
    expect(b.reduce((s, x) => s + x.count, 0)).toBe(values.length);
    if (lo !== undefined) expect(b[0]!.lo).toBe(lo);
    if (hi !== undefined) expect(b[b.length - 1]!.hi).toBe(hi);
  });
});

describe('timings stats', () => {
  it.each([
    { values: [1], median: 1 },
    { values: [3, 1, 2], median: 2 },
    { values: [4, 1, 3, 2], median: 2.5 },
  ])('median of $values is $median', ({ values, median: m }) => {
    expect(median(values)).toBe(m);
  });

  it('per phase over the rows that timed it, in order of first appearance', () => {
    const stats = timingStats([
      row({ task_id: 'a', repeat: 1, timings: { seed: 1, agent: 10, verify: 2 } }),
      row({ task_id: 'a', repeat: 2, timings: { seed: 3, agent: 20 } }),
      row({ task_id: 'a', repeat: 3, timings: { seed: 2, agent: 60, verify: 4 } }),
      row({ task_id: 'a', repeat: 4, timings: {} }),
    ]);
    expect(stats).toEqual([
      { phase: 'seed', n: 3, mean: 2, median: 2, max: 3 },
      { phase: 'agent', n: 3, mean: 30, median: 20, max: 60 },
      { phase: 'verify', n: 2, mean: 3, median: 3, max: 4 },
    ]);
  });

  it('ignores values that are not finite numbers', () => {
    const bad = row({ task_id: 'a', repeat: 1, timings: { agent: Number.NaN, verify: 'x' as unknown as number } });
    expect(timingStats([bad])).toEqual([]);
  });
});

describe('counts and failure kinds', () => {
  it('counts scored, masked and failed; mean over unmasked rows', () => {
    const { rows, failed } = syntheticBatch();
    const reported = rows.filter((r) => !(r.task_id === 'gamma' && r.repeat === 2 && r.attempt === 1));
    expect(countsOf(reported, failed)).toEqual({ episodes: 9, scored: 7, masked: 1, failed: 1, meanReward: 4.5 / 7 });
    expect(countsOf([], 0).meanReward).toBeNull();
  });

  it('one entry per kind: count, masked or scored, an example reason', () => {
    const { rows } = syntheticBatch();
    expect(failureKinds(rows)).toEqual([
      { kind: 'harbor:missing_reward', count: 1, counts: 'scored', example: expect.stringContaining('<script>'), exampleTask: 'beta #1' },
      { kind: 'harbor:seed_failed', count: 1, counts: 'masked', example: 'healthcheck retries spent', exampleTask: 'gamma #2' },
      { kind: 'provider_unavailable', count: 1, counts: 'masked', example: 'sandbox lost: container berth-x is gone', exampleTask: 'beta #2' },
    ]);
  });
});
