import { describe, expect, it } from 'vitest';
import { metricsOf } from '../../src/client/results.ts';
import type { ResultRow } from '../../src/workflows/types.ts';

const row = (task: string, usage?: ResultRow['usage']): ResultRow => ({
  task_id: task, repeat: 1, attempt: 1, reward: 1, verifier_rewards: {}, failure_kind: null, failure_reason: null, mask_sample: false,
  turns: [], stopped_after_turn: null, response: { output: [] }, response_text: '', verifier_mode: 'shared', digest: 'd', timings: {},
  workflow_id: 'w', run_id: 'r', host: null, logs_dir: null, ...(usage ? { usage } : {}),
});

describe('metrics.json usage (issue 16: totals and per-task means)', () => {
  it('totals every row and averages per task over the episodes that called a model', () => {
    const m = metricsOf([
      row('a', { promptTokens: 100, completionTokens: 10, calls: 2, cachedTokens: 20, costUsd: 0.5 }),
      row('a', { promptTokens: 300, completionTokens: 30, calls: 4, cachedTokens: 0, costUsd: 1.5 }),
      row('b', { promptTokens: 7, completionTokens: 1, calls: 1 }),
      row('c'),
    ]);
    expect(m.usage).toEqual({
      total: { promptTokens: 407, completionTokens: 41, calls: 7, cachedTokens: 20, costUsd: 2 },
      per_task_mean: {
        a: { promptTokens: 200, completionTokens: 20, calls: 3, cachedTokens: 10, costUsd: 1 },
        b: { promptTokens: 7, completionTokens: 1, calls: 1 },
      },
    });
  });

  it('leaves usage out when no episode called a model', () => {
    expect(metricsOf([row('a')]).usage).toBeUndefined();
  });
});
