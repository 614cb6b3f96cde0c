import { describe, expect, it } from 'vitest';
import { ALL_FAILURE_KINDS, isFailureKind, isMasked, isRetryable, type FailureKind } from '../../src/outcomes/failure-kinds.ts';

describe('failure kinds (DESIGN.md §4 "Failure kinds")', () => {
  const table: Array<[FailureKind, boolean, boolean]> = [
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
    ['harbor:step_setup_failed', true, false],
    // Issue 16 (installed agents and the model gateway): the agent's own endings count; set-up failures mask.
    ['agent:context_length', false, false],
    ['agent:max_tokens', false, false],
    ['agent:max_cost', false, false],
    ['agent:install_failed', true, false],
    ['agent:bad_credentials', true, true],
    ['agent:unknown_model', true, false],
    // A model endpoint's other 4xx (src/outcomes/model-status.ts): a setting is wrong; asked again it says the same.
    ['agent:model_rejected', true, false],
  ];

  it.each(table)('%s masked=%s retryable=%s', (kind, masked, retryable) => {
    expect(isMasked(kind)).toBe(masked);
    expect(isRetryable(kind)).toBe(retryable);
    expect(isFailureKind(kind)).toBe(true);
  });

  it('lists exactly the kinds of the design, once each', () => {
    expect([...ALL_FAILURE_KINDS].sort()).toEqual(table.map(([k]) => k).sort());
  });

  it.each(['', 'reward', 'harbor:unknown', 'toString', '__proto__', 42, null])('%j is not a failure kind', (v) => {
    expect(isFailureKind(v)).toBe(false);
  });
});
