import { describe, expect, it } from 'vitest';
import { ALL_FAILURE_KINDS, isFailureKind, isMasked, type FailureKind } from '../../src/verify/failure-kinds.ts';

describe('failure kinds (DESIGN.md §4 "Failure kinds")', () => {
  const table: Array<[FailureKind, boolean]> = [
    ['harbor:missing_reward', false],
    ['harbor:invalid_reward', false],
    ['harbor:verifier_timeout', false],
    ['verifier_error', true],
    ['provider_unavailable', true],
    ['harbor:overlay_failed', true],
    ['harbor:entrypoint_failed', true],
    ['harbor:seed_failed', true],
    ['harbor:episode_deadline', true],
    // Issue 16 (installed agents and the model gateway): the agent's own endings count; set-up failures mask.
    ['agent:context_length', false],
    ['agent:max_tokens', false],
    ['agent:max_cost', false],
    ['agent:install_failed', true],
    ['agent:bad_credentials', true],
    ['agent:unknown_model', true],
  ];

  it.each(table)('%s masked=%s', (kind, masked) => {
    expect(isMasked(kind)).toBe(masked);
    expect(isFailureKind(kind)).toBe(true);
  });

  it('lists exactly the kinds of the design, once each', () => {
    expect([...ALL_FAILURE_KINDS].sort()).toEqual(table.map(([k]) => k).sort());
  });

  it.each(['', 'reward', 'harbor:unknown', 'toString', '__proto__', 42, null])('%j is not a failure kind', (v) => {
    expect(isFailureKind(v)).toBe(false);
  });
});
