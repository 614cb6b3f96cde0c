import { describe, expect, it } from 'vitest';
import { rollUp, shouldStop } from '../../src/workflows/rollup.ts';
import { failedTurn } from '../../src/workflows/failures.ts';
import type { TurnOutcome } from '../../src/workflows/types.ts';

const turn = (reward: number | null, keys: Record<string, number> = {}, extra: Partial<TurnOutcome> = {}): TurnOutcome => ({
  step: 's', reward, verifier_rewards: reward === null ? {} : { reward, ...keys }, failure_kind: null, failure_reason: null,
  masked: false, response_text: '', timings: {}, ...extra,
});
const missing = turn(0, {}, { verifier_rewards: {}, failure_kind: 'harbor:missing_reward', failure_reason: 'no file' });
const masked = turn(null, {}, { failure_kind: 'provider_unavailable', failure_reason: 'gone', masked: true });
// The agent's model ended the turn and its verifier then scored it (Multi-Step Harbor Tasks § Reward roll-up).
const ended = (kind: string, reward = 1, keys: Record<string, number> = {}) => turn(reward, keys, { failure_kind: kind, failure_reason: 'limit' });
// A reward.json without a `reward` key scores the sum of its components (Task Folder Verifiers § Reward files).
const summed = (components: Record<string, number>): TurnOutcome =>
  turn(Object.values(components).reduce((a, b) => a + b, 0), {}, { verifier_rewards: { ...components }, reward_components: { ...components } });
const setupFailed = failedTurn('s2', 'harbor:step_setup_failed', 'setup.sh exited 1', 1);

describe('roll-up (Multi-Step Harbor Tasks § Reward roll-up)', () => {
  it.each([
    ['mean of every turn that ran', [turn(1), turn(0.5)], 'mean', 0.75, { reward: 0.75 }, null],
    ['mean counts a missing key as 0', [turn(1, { a: 1 }), turn(1)], 'mean', 1, { reward: 1, a: 0.5 }, null],
    ['mean counts a turn without a valid reward as 0 under every key and carries its kind', [turn(1, { a: 1 }), missing], 'mean', 0.5, { reward: 0.5, a: 0.5 }, 'harbor:missing_reward'],
    ['final takes the last turn that ran', [turn(1, { a: 1 }), turn(0.25, { b: 2 })], 'final', 0.25, { reward: 0.25, b: 2 }, null],
    ['final with a missing reward scores 0', [turn(1), missing], 'final', 0, {}, 'harbor:missing_reward'],
    ['a single turn is its own result', [turn(0.3)], 'mean', 0.3, { reward: 0.3 }, null],
    ['mean counts a verified turn the model ended on its context window', [turn(1), ended('agent:context_length')], 'mean', 1, { reward: 1 }, 'agent:context_length'],
    ['mean counts a verified turn ended on --max-tokens, per key too', [turn(1, { a: 1 }), ended('agent:max_tokens', 0.5, { a: 0.5 })], 'mean', 0.75, { reward: 0.75, a: 0.75 }, 'agent:max_tokens'],
    ['mean counts a verified turn ended on --max-cost', [ended('agent:max_cost', 0.5), turn(1)], 'mean', 0.75, { reward: 0.75 }, null],
    ['final takes the verified reward of a turn the model ended', [turn(0), ended('agent:max_tokens', 0.5)], 'final', 0.5, { reward: 0.5 }, 'agent:max_tokens'],
    ['a later step whose setup failed counts 0 and names its kind', [turn(1), setupFailed], 'mean', 0.5, { reward: 0.5 }, 'harbor:step_setup_failed'],
  ] as const)('%s', (_name, turns, strategy, reward, keys, kind) => {
    const r = rollUp([...turns], strategy);
    expect(r.reward).toBeCloseTo(reward);
    expect(r.masked).toBe(false);
    for (const [k, v] of Object.entries(keys)) expect(r.verifier_rewards[k]).toBeCloseTo(v);
    expect(Object.keys(r.verifier_rewards).sort()).toEqual(Object.keys(keys).sort());
    expect(r.failure_kind).toBe(kind);
  });

  it('a masked turn masks the episode with its kind', () => {
    const r = rollUp([turn(1), masked], 'mean');
    expect(r).toMatchObject({ masked: true, reward: null, failure_kind: 'provider_unavailable', failure_reason: 'gone' });
  });

  it('a mean keeps reward_components: per-key means over every turn, a missing key and an invalid turn counting 0', () => {
    const r = rollUp([summed({ a: 1, b: 0.5 }), summed({ a: 0.5 }), turn(1), { ...missing, reward_components: { a: 9 } }], 'mean');
    expect(r.reward).toBeCloseTo((1.5 + 0.5 + 1 + 0) / 4);
    expect(r.reward_components).toEqual({ a: (1 + 0.5) / 4, b: 0.5 / 4 });
    expect(r.verifier_rewards).toEqual({ a: (1 + 0.5) / 4, b: 0.5 / 4, reward: 1 / 4 });
  });

  it('a mean over turns that all wrote a `reward` key has no reward_components', () => {
    expect(rollUp([turn(1), turn(0.5)], 'mean')).not.toHaveProperty('reward_components');
  });

  it('no turn at all is masked', () => {
    expect(rollUp([], 'mean').masked).toBe(true);
  });
});

describe('early stop (Multi-Step Harbor Tasks § Early stop)', () => {
  it.each([
    ['a masked turn', masked, undefined, true],
    ['a turn without a valid reward', missing, undefined, true],
    ['a valid turn without a gate', turn(0), undefined, false],
    ['a number gates reward: below', turn(0.4), 0.5, true],
    ['a number gates reward: at the gate', turn(0.5), 0.5, false],
    ['a table gates each named key: one below', turn(1, { a: 0.2 }), { a: 0.5 }, true],
    ['a table gates each named key: all met', turn(0.1, { a: 0.6 }), { a: 0.5 }, false],
    ['a table naming a key the turn lacks fails', turn(1), { b: 0 }, true],
    ['a table may gate reward itself', turn(0.2), { reward: 0.5 }, true],
    // Harbor 0.25 (trial/multi_step.py _min_reward_failure): a gated key the rewards lack is -inf. The same tiny task
    // run under Harbor (a first step whose reward.json is {"score": 1}, min_reward = 0.5) stopped after that step.
    ['a number gate fails a reward.json without a `reward` key, whatever its components sum to', summed({ score: 1 }), 0.5, true],
    ['a table gating `reward` fails a reward.json without one', summed({ score: 1 }), { reward: 0 }, true],
    ['a table gating a component of such a file reads that key', summed({ score: 1 }), { score: 0.5 }, false],
    ['a key named like an Object member is still missing', turn(1), { constructor: 0 }, true],
    ['no verifier result fails every gate', missing, { a: 0 }, true],
    ['a verified turn the model ended on its context window goes on', ended('agent:context_length'), undefined, false],
    ['a verified turn ended on --max-tokens goes on', ended('agent:max_tokens'), undefined, false],
    ['a verified turn ended on --max-cost goes on', ended('agent:max_cost'), undefined, false],
    ['a turn the model ended still meets its gate by its verifier', ended('agent:max_tokens', 0.6), 0.5, false],
    ['a turn the model ended still misses its gate by its verifier', ended('agent:max_tokens', 0.4), 0.5, true],
    ['a later step whose setup failed', setupFailed, undefined, true],
  ] as const)('%s', (_name, t, gate, stop) => {
    expect(shouldStop(t, gate as any)).toBe(stop);
  });
});

describe('a turn ended by a failure (Multi-Step Harbor Tasks § Reward roll-up; issue 22)', () => {
  it.each([
    ['a first step whose setup failed is the task\'s fault: masked', 'harbor:step_setup_failed', 0, { masked: true, reward: null }],
    ['a later step whose setup failed scores 0 (an earlier agent may have caused it)', 'harbor:step_setup_failed', 1, { masked: false, reward: 0 }],
    ['a third step whose setup failed scores 0', 'harbor:step_setup_failed', 2, { masked: false, reward: 0 }],
    ['a lost sandbox masks on any turn', 'provider_unavailable', 1, { masked: true, reward: null }],
    ['a past deadline masks on any turn', 'harbor:episode_deadline', 2, { masked: true, reward: null }],
  ] as const)('%s', (_name, kind, i, expected) => {
    const t = failedTurn('s', kind, 'why', i);
    expect(t).toMatchObject({ ...expected, failure_kind: kind, failure_reason: 'why', verifier_rewards: {} });
  });
});
