// The pure half of the Harbor job writer (issue 24): names, where files land, and rows mapped onto Harbor's trial and
// job models, table by table. The real models read the result in job-dir.test.ts.
import { describe, expect, it } from 'vitest';
import { trialName, uuidOf } from '../../src/client/harbor-job/names.ts';
import { trialPathOf } from '../../src/client/harbor-job/layout.ts';
import { evalsKey, modelInfoOf, type JobMeta } from '../../src/client/harbor-job/job-meta.ts';
import { phaseTimings, trialResultOf } from '../../src/client/harbor-job/trial.ts';
import { jobResultOf } from '../../src/client/harbor-job/job.ts';
import type { ResultRow } from '../../src/client/index.ts';

const meta: JobMeta = {
  batchId: 'b1', jobDir: '/r/b1', datasetName: 'ds', datasetPath: '/d/ds', agent: 'oracle', model: null, agentArgs: {},
  repeats: 2, concurrency: 4, tasks: [{ taskId: 'a', taskPath: '/d/ds/a' }, { taskId: 'b', taskPath: '/d/ds/b' }], startedAt: '2026-12-01T10:00:00.000Z',
};

function row(over: Partial<ResultRow>): ResultRow {
  const task = over.task_id ?? 'a';
  const repeat = over.repeat ?? 1;
  const attempt = over.attempt ?? 1;
  return {
    task_id: task, repeat, attempt, reward: 1, verifier_rewards: { reward: 1 }, failure_kind: null, failure_reason: null, mask_sample: false,
    turns: [{ step: task, reward: 1, verifier_rewards: { reward: 1 }, failure_kind: null }], stopped_after_turn: null,
    response: { output: [] }, response_text: '', verifier_mode: 'shared', digest: 'sha256:x', timings: { seed: 2, agent: 3, verify: 1 },
    workflow_id: `berth/b1/${task}/${repeat}${attempt > 1 ? `~a${attempt}` : ''}`, run_id: `run-${task}-${repeat}-${attempt}`, host: 'h', logs_dir: null,
    ...over,
  };
}
const times = { startedAt: '2026-12-01T10:00:00.000Z', finishedAt: '2026-12-01T10:00:07.000Z' };
const trial = (r: ResultRow) => trialResultOf(r, meta, times, 'files');

describe('names (Harbor trial names, stable UUIDs)', () => {
  it.each([
    ['hello', 'hello__'],
    ['org/some-task', 'some-task__'],
    ['a-very-long-task-name-that-goes-past-32-chars', 'a-very-long-task-name-that-goes__'],
    ['ends-with-dash-at-thirty-two-c--x', 'ends-with-dash-at-thirty-two-c__'],
  ])('%s → %s…', (task, prefix) => {
    const name = trialName(task, `berth/b/${task}/1`);
    expect(name.startsWith(prefix)).toBe(true);
    expect(name.slice(prefix.length)).toMatch(/^[2-9A-HJ-NP-Za-km-z]{7}$/);
  });
  it('the same workflow id gives the same name and UUID; another gives others', () => {
    expect(trialName('a', 'berth/b/a/1')).toBe(trialName('a', 'berth/b/a/1'));
    expect(trialName('a', 'berth/b/a/1')).not.toBe(trialName('a', 'berth/b/a/1~a2'));
    expect(uuidOf('x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uuidOf('x')).toBe(uuidOf('x'));
    expect(uuidOf('x')).not.toBe(uuidOf('y'));
  });
});

describe('layout: where an episode file lands in its trial folder', () => {
  it.each([
    ['turn-1/agent/trajectory.json', 'agent/trajectory.json'],
    ['./turn-1/verifier/reward.txt', 'verifier/reward.txt'],
    ['turn-2/agent/x', 'berth/turn-2/agent/x'],
    ['steps/s1/agent/trajectory.json', 'steps/s1/agent/trajectory.json'],
    ['entrypoint-stdout.txt', 'entrypoint-stdout.txt'],
    ['result.json', 'berth/result.json'],
    ['config.json', 'berth/config.json'],
    ['seeded-sandbox.json', 'berth/seeded-sandbox.json'],
    ['turn-1/verify-outcome.json', 'berth/turn-1/verify-outcome.json'],
    ['steps/s2/verify-outcome.json', 'berth/steps/s2/verify-outcome.json'],
    ['turn-1', null],
    ['../etc/passwd', null],
    ['turn-1/../../x', null],
    ['', null],
  ])('%s → %s', (from, to) => expect(trialPathOf(from)).toBe(to));
});

describe('model names and the evals key (JobStats.format_agent_evals_key)', () => {
  it.each([
    ['oracle', null, 'ds', 'oracle__ds', null],
    ['claude-code', 'anthropic/claude-sonnet-4-5', 'ds', 'claude-code__claude-sonnet-4-5__ds', { name: 'claude-sonnet-4-5', provider: 'anthropic' }],
    ['openai', 'gpt-5', null, 'openai__gpt-5__adhoc', { name: 'gpt-5', provider: null }],
  ])('%s %s %s', (agent, model, ds, key, info) => {
    expect(evalsKey(agent, model, ds)).toBe(key);
    expect(modelInfoOf(model)).toEqual(info);
  });
});

describe('a row as a Harbor trial', () => {
  it.each([
    ['scored', row({}), { verifier_result: { rewards: { reward: 1 } }, exception_info: null }],
    ['scored failure (counts 0)', row({ reward: 0, verifier_rewards: {}, failure_kind: 'harbor:missing_reward', failure_reason: 'no reward file' }),
      { verifier_result: { rewards: { reward: 0 } }, exception_info: { exception_type: 'harbor:missing_reward', exception_message: 'no reward file' } }],
    ['masked', row({ reward: null, verifier_rewards: {}, mask_sample: true, failure_kind: 'provider_unavailable', failure_reason: 'sandbox gone' }),
      { verifier_result: null, exception_info: { exception_type: 'provider_unavailable', exception_message: 'sandbox gone', occurred_at: times.finishedAt } }],
    ['reward keys beside the reward', row({ reward: 0.5, verifier_rewards: { a: 1, b: 0 } }), { verifier_result: { rewards: { a: 1, b: 0, reward: 0.5 } } }],
    ['regraded', row({ attempt: 2, regraded_from: 'berth/b1/a/1' }), { berth: { attempt: 2, regraded_from: 'berth/b1/a/1' } }],
  ])('%s', (_name, r, want) => expect(trial(r)).toMatchObject(want));

  it('usage becomes agent_result (n_input_tokens includes cached input); a multi-step trial has it on its steps', () => {
    const usage = { promptTokens: 100, completionTokens: 20, calls: 2, cachedTokens: 40, costUsd: 0.01 };
    expect(trial(row({ usage })).agent_result).toEqual({ n_input_tokens: 100, n_cache_tokens: 40, n_output_tokens: 20, cost_usd: 0.01 });
    const multi = trial(row({
      usage, verifier_mode: 'shared', stopped_after_turn: 's1', reward: 0,
      turns: [{ step: 's1', reward: 0, verifier_rewards: {}, failure_kind: null, usage }, { step: 's2', reward: null, verifier_rewards: {}, failure_kind: 'provider_unavailable' }],
    }));
    expect(multi).toMatchObject({ agent_result: null, verifier_environment_mode: null });
    expect(multi.step_results).toMatchObject([
      { step_name: 's1', agent_result: { n_input_tokens: 100 }, verifier_result: { rewards: { reward: 0 } }, exception_info: null },
      { step_name: 's2', agent_result: null, verifier_result: null, exception_info: { exception_type: 'provider_unavailable' } },
    ]);
  });

  it('phases laid end to end from the workflow start; none without a start', () => {
    expect(phaseTimings(times, { seed: 2, agent: 3, verify: 1 })).toEqual({
      environment_setup: { started_at: '2026-12-01T10:00:00.000Z', finished_at: '2026-12-01T10:00:02.000Z' },
      agent_execution: { started_at: '2026-12-01T10:00:02.000Z', finished_at: '2026-12-01T10:00:05.000Z' },
      verifier: { started_at: '2026-12-01T10:00:05.000Z', finished_at: '2026-12-01T10:00:06.000Z' },
    });
    expect(phaseTimings({ startedAt: null, finishedAt: null }, { seed: 2 })).toEqual({ environment_setup: null, agent_execution: null, verifier: null });
  });
});

describe('the job result: the newest attempt of each (task, repeat) counts', () => {
  const progress = { finishedAt: null, updatedAt: '2026-12-01T11:00:00.000Z', running: 0, failedEpisodes: 0, skippedTasks: 0 };
  it.each([
    ['all scored', [row({}), row({ repeat: 2, reward: 0, verifier_rewards: { reward: 0 } }), row({ task_id: 'b' }), row({ task_id: 'b', repeat: 2 })],
      { n_completed_trials: 4, n_errored_trials: 0, n_retries: 0, n_pending_trials: 0 }, { mean: 0.75, pass: { 1: 0.75, 2: 1 }, exceptions: {} }],
    ['a masked attempt retried', [row({ reward: null, mask_sample: true, failure_kind: 'provider_unavailable' }), row({ attempt: 2 })],
      { n_completed_trials: 1, n_errored_trials: 0, n_retries: 1, n_pending_trials: 3 }, { mean: 1, pass: {}, exceptions: {} }],
    ['masked and not retried', [row({ reward: null, mask_sample: true, failure_kind: 'provider_unavailable' }), row({ task_id: 'b', reward: 0 })],
      { n_completed_trials: 2, n_errored_trials: 1, n_retries: 0, n_pending_trials: 2 }, { mean: 0, pass: {}, exceptions: { provider_unavailable: 1 } }],
  ])('%s', (_name, rows, stats, want) => {
    const r = jobResultOf(meta, rows.map(trial), progress);
    expect(r.n_total_trials).toBe(4);
    expect(r.stats).toMatchObject(stats);
    const ev = r.stats.evals.oracle__ds!;
    expect(ev.metrics).toEqual([{ mean: want.mean }]);
    expect(Object.fromEntries(Object.entries(ev.pass_at_k).map(([k, v]) => [k, Number(v.toFixed(3))]))).toEqual(want.pass);
    expect(Object.fromEntries(Object.entries(ev.exception_stats).map(([k, v]) => [k, v.length]))).toEqual(want.exceptions);
    expect(r.berth.earlier_attempts).toHaveLength(stats.n_retries);
  });

  it('token totals add up over the counted trials only', () => {
    const usage = { promptTokens: 10, completionTokens: 5, calls: 1 };
    const r = jobResultOf(meta, [row({ usage, attempt: 1 }), row({ usage, attempt: 2 }), row({ task_id: 'b' })].map(trial), progress);
    expect(r.stats).toMatchObject({ n_input_tokens: 10, n_cache_tokens: 0, n_output_tokens: 5, cost_usd: null });
  });
});
