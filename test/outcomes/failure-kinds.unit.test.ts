import { describe, expect, it } from 'vitest';
import { ALL_FAILURE_KINDS, isFailureKind, isMasked, isRetryable, keepsVerifierReward, type FailureKind } from '../../src/outcomes/failure-kinds.ts';

describe('failure kinds (docs/design.md section 4 "Failure kinds")', () => {
  // [kind, masked on the first turn, retryable, masked on a later turn, keeps its verifier's reward]
  const table: Array<[FailureKind, boolean, boolean, boolean?, boolean?]> = [
    ['harbor:missing_reward', false, false],
    ['harbor:invalid_reward', false, false],
    ['harbor:verifier_timeout', false, false],
    ['verifier_error', true, false],
    ['provider_unavailable', true, true],
    ['harbor:overlay_failed', true, true],
    ['harbor:entrypoint_failed', true, true],
    ['harbor:seed_failed', true, true],
    ['harbor:episode_deadline', true, true],
    // A step's setup.sh or healthcheck failing is the task's fault (issue 14): masked, and a retry changes nothing.
    // On a later step it scores 0 (issue 22): the earlier agents may have broken its setup.
    ['harbor:step_setup_failed', true, false, false],
    // Issue 16 (installed agents and the model gateway): the agent's own endings count; set-up failures mask.
    ['agent:context_length', false, false, false, true],
    ['agent:max_tokens', false, false, false, true],
    ['agent:max_cost', false, false, false, true],
    ['agent:install_failed', true, false],
    ['agent:bad_credentials', true, true],
    ['agent:unknown_model', true, false],
    // A model endpoint's other 4xx (src/outcomes/model-status.ts): a setting is wrong; asked again it says the same.
    ['agent:model_rejected', true, false],
  ];

  it.each(table)('%s masked=%s retryable=%s, later turn masked=%s, keeps the reward=%s', (kind, masked, retryable, later = masked, keeps = false) => {
    expect(isMasked(kind)).toBe(masked);
    expect(isMasked(kind, 0)).toBe(masked);
    expect(isMasked(kind, 1)).toBe(later);
    expect(isMasked(kind, 4)).toBe(later);
    expect(isRetryable(kind)).toBe(retryable);
    expect(isFailureKind(kind)).toBe(true);
    expect(keepsVerifierReward(kind)).toBe(keeps);
  });

  it.each([[null, true], ['harbor:unknown', false]] as const)('keepsVerifierReward(%j) is %s', (kind, keeps) => {
    expect(keepsVerifierReward(kind)).toBe(keeps);
  });

  it('lists exactly the kinds of the design, once each', () => {
    expect([...ALL_FAILURE_KINDS].sort()).toEqual(table.map(([k]) => k).sort());
  });

  it.each(['', 'reward', 'harbor:unknown', 'toString', '__proto__', 42, null])('%j is not a failure kind', (v) => {
    expect(isFailureKind(v)).toBe(false);
  });
});
