import { describe, expect, it } from 'vitest';
import { metricsOf, newestAttempts, passAtK } from '../../src/client/results.ts';
import type { ResultRow } from '../../src/workflows/types.ts';

const row = (task_id: string, repeat: number, reward: number | null, extra: Partial<ResultRow> = {}): ResultRow => ({
  task_id, repeat, attempt: 1, reward, verifier_rewards: {}, failure_kind: null, failure_reason: null, mask_sample: reward === null,
  turns: [], stopped_after_turn: null, response: { output: [] }, response_text: '', verifier_mode: 'shared', digest: 'd', timings: {},
  workflow_id: `w/${task_id}/${repeat}`, run_id: 'r', host: 'h', logs_dir: null, ...extra,
});

describe('metrics.json (docs/design.md section 7, Formats)', () => {
  it.each([
    [5, 0, 1, 0], [5, 5, 1, 1], [5, 1, 1, 0.2], [5, 2, 2, 1 - (3 / 5) * (2 / 4)], [2, 1, 2, 1], [3, 0, 2, 0],
  ])('pass@k with n=%i, c=%i, k=%i is %f (unbiased estimator)', (n, c, k, expected) => {
    expect(passAtK(n, c, k)).toBeCloseTo(expected);
  });

  it('mean over unmasked rows, counts, kinds, and pass@k over repeats (success = reward ≥ 1)', () => {
    const m = metricsOf([
      row('a', 1, 1), row('a', 2, 0, { failure_kind: 'harbor:missing_reward' }),
      row('b', 1, 1), row('b', 2, 1), row('c', 1, null, { failure_kind: 'provider_unavailable' }),
    ], 1);
    expect(m).toMatchObject({ mean_reward: 0.75, scored: 4, masked: 1, failed: 1 });
    expect(m.failure_kinds).toEqual({ 'harbor:missing_reward': 1, provider_unavailable: 1 });
    expect(m.pass_at_k!['pass@1']).toBeCloseTo((0.5 + 1) / 2);
    expect(m.pass_at_k!['pass@2']).toBeCloseTo(1);
  });

  it('reports the newest attempt of each (task, repeat)', () => {
    const rows = newestAttempts([row('a', 1, null), row('a', 1, 1, { attempt: 2 }), row('a', 2, 0)]);
    expect(rows.map((r) => [r.repeat, r.attempt, r.reward])).toEqual([[1, 2, 1], [2, 1, 0]]);
  });
});
