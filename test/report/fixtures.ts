import type { ResultRow } from '../../src/workflows/types.ts';

export function row(over: Partial<ResultRow> & Pick<ResultRow, 'task_id' | 'repeat'>): ResultRow {
  const attempt = over.attempt ?? 1;
  return {
    attempt,
    reward: 1,
    verifier_rewards: {},
    failure_kind: null,
    failure_reason: null,
    mask_sample: false,
    turns: [],
    stopped_after_turn: null,
    response: { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '' }] }] },
    response_text: '',
    verifier_mode: 'shared',
    digest: 'sha256:0',
    timings: {},
    workflow_id: `berth/b/${over.task_id}/${over.repeat}${attempt > 1 ? `~a${attempt}` : ''}`,
    run_id: 'run',
    host: 'host',
    logs_dir: null,
    ...over,
  };
}

export const SCRIPT_REASON = 'test.sh wrote no reward file; stdout: <script>window.__pwned = true</script>';

/**
 * 3 tasks × 3 repeats: a scored failure, a masked row, a masked first attempt retried into a
 * success, and one episode whose workflow failed (no row; `failed: 1`).
 */
export function syntheticBatch(): { rows: ResultRow[]; failed: number } {
  const t = (agent: number, verify: number, seed = 1) => ({ seed, agent, verify });
  const rows = [
    row({ task_id: 'alpha', repeat: 1, reward: 1, timings: t(2, 1) }),
    row({ task_id: 'alpha', repeat: 2, reward: 1, timings: t(4, 1) }),
    row({ task_id: 'alpha', repeat: 3, reward: 0, timings: t(6, 1) }),
    row({ task_id: 'beta', repeat: 1, reward: 0, failure_kind: 'harbor:missing_reward', failure_reason: SCRIPT_REASON, timings: t(3, 2) }),
    row({ task_id: 'beta', repeat: 2, reward: null, mask_sample: true, failure_kind: 'provider_unavailable', failure_reason: 'sandbox lost: container berth-x is gone', timings: { seed: 30 } }),
    row({ task_id: 'beta', repeat: 3, reward: 1, timings: t(3, 2) }),
    row({ task_id: 'gamma', repeat: 1, reward: 0.5, timings: t(1, 1) }),
    row({ task_id: 'gamma', repeat: 2, attempt: 1, reward: null, mask_sample: true, failure_kind: 'harbor:seed_failed', failure_reason: 'healthcheck retries spent' }),
    row({ task_id: 'gamma', repeat: 2, attempt: 2, reward: 1, timings: t(1, 1) }),
  ];
  return { rows, failed: 1 };
}
