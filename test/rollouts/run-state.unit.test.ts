import { describe, expect, it } from 'vitest';
import {
  acknowledge, addGroups, deliverComplete, finished, groupsAfter, isStale, newRunState, recordAttempt, takeNext,
  type EpisodeOutcome, type RunState,
} from '../../src/rollouts/run-state.ts';
import { applyPolicyChange, groupPolicyProblem, policyChangeProblem, setDraining } from '../../src/rollouts/policy.ts';
import type { GroupPolicy, PolicyState } from '../../src/rollouts/types.ts';

const policy: PolicyState = { endpoint: { baseUrl: 'http://policy:8000', model: 'm' }, sampling: {}, version: 0, draining: false, seq: 0 };
const task = (id: string) => ({ taskId: id, taskPath: `/d/${id}`, digest: `sha-${id}` });
const scored = (reward: number, firstVersion?: number): EpisodeOutcome => ({
  reward, mask_sample: false, failure_kind: null, failure_reason: null, workflow_id: 'w', logs_dir: '/logs',
  ...(firstVersion !== undefined ? { training: { tokens: 'token-records.jsonl', calls: 2, first_version: firstVersion, last_version: firstVersion + 1, exact: true } } : {}),
});
const masked: EpisodeOutcome = { reward: null, mask_sample: true, failure_kind: 'provider_unavailable', failure_reason: 'sandbox lost', workflow_id: 'w', logs_dir: null };

/** Starts every queued attempt and finishes each with the outcome `decide` gives it, until the queue is empty. */
function drive(state: RunState, decide: (group: number, sample: number, attempt: number) => EpisodeOutcome | undefined): string[] {
  const verdicts: string[] = [];
  for (let next = takeNext(state); next; next = takeNext(state)) {
    const { group, sample, attempt } = next.attempt;
    verdicts.push(`${group}.${sample}.${attempt}:${recordAttempt(state, next.attempt, state.policy.version, decide(group, sample, attempt))}`);
  }
  return verdicts;
}

const run = (groupPolicy: GroupPolicy, maxStaleness: number | null = null) => newRunState({ groupPolicy, maxStaleness, policy });

describe('rollout groups under each group policy', () => {
  it.each<[string, GroupPolicy, boolean, boolean[], number]>([
    // policy, group masked, valid per row, attempts of sample 1
    ['mask: one masked sample masks the group, 3 rows kept', { kind: 'mask' }, true, [false, false, false], 1],
    ['partial: delivered with a per-sample valid mask', { kind: 'partial' }, false, [true, false, true], 1],
    ['retry: the masked sample is replaced by a fresh attempt', { kind: 'retry', maxRetries: 2 }, false, [true, true, true], 2],
  ])('%s', (_name, groupPolicy, groupMasked, valid, attemptsOfSample1) => {
    const state = run(groupPolicy);
    addGroups(state, [task('a')], 3);
    drive(state, (_g, sample, attempt) => (sample === 1 && attempt === 1 ? masked : scored(1)));
    const [group] = deliverComplete(state);
    expect(group).toMatchObject({ seq: 1, task_id: 'a', masked: groupMasked });
    expect(group!.rows).toHaveLength(3);
    expect(group!.rows.map((r) => r.valid)).toEqual(valid);
    expect(group!.rows[1]!.attempt).toBe(attemptsOfSample1);
  });

  it('retry: a sample masked k+1 times masks the group (placeholder row, never a reward of 0)', () => {
    const state = run({ kind: 'retry', maxRetries: 2 });
    addGroups(state, [task('a')], 2);
    const verdicts = drive(state, (_g, sample) => (sample === 0 ? masked : scored(0.5)));
    expect(verdicts).toEqual(['0.0.1:retry', '0.0.2:retry', '0.0.3:masked', '0.1.1:kept']);
    const [group] = deliverComplete(state);
    expect(group!.masked).toBe(true);
    expect(group!.rows[0]).toMatchObject({ mask_sample: true, reward: null, failure_kind: 'provider_unavailable', attempt: 3 });
    expect(state.counters).toMatchObject({ retried: 2, masked: 1, scored: 1 });
  });

  it('an episode that failed without a row masks its sample as a failure on Berth\'s side', () => {
    const state = run({ kind: 'partial' });
    addGroups(state, [task('a')], 1);
    drive(state, () => undefined);
    expect(deliverComplete(state)[0]!.rows[0]).toMatchObject({ valid: false, mask_sample: true, reward: null, failure_kind: 'provider_unavailable' });
  });

  it('a group is delivered only complete, and groups get increasing sequence numbers in completion order', () => {
    const state = run({ kind: 'mask' });
    addGroups(state, [task('a'), task('b')], 2);
    const a0 = takeNext(state)!; const a1 = takeNext(state)!; const b0 = takeNext(state)!; const b1 = takeNext(state)!;
    recordAttempt(state, a0.attempt, 0, scored(1));
    recordAttempt(state, b0.attempt, 0, scored(0));
    expect(deliverComplete(state)).toEqual([]);
    recordAttempt(state, b1.attempt, 0, scored(1));
    expect(deliverComplete(state).map((g) => [g.seq, g.task_id])).toEqual([[1, 'b']]);
    recordAttempt(state, a1.attempt, 0, scored(1));
    expect(deliverComplete(state).map((g) => [g.seq, g.task_id])).toEqual([[2, 'a']]);
  });

  it('a second result for the same attempt (a replayed completion) changes nothing', () => {
    const state = run({ kind: 'mask' });
    addGroups(state, [task('a')], 1);
    const a = takeNext(state)!;
    expect(recordAttempt(state, a.attempt, 0, scored(1))).toBe('kept');
    expect(recordAttempt(state, a.attempt, 0, masked)).toBe('ignored');
    expect(state.counters).toMatchObject({ scored: 1, masked: 0 });
  });
});

describe('staleness', () => {
  it.each<[number, number, number | null, boolean]>([
    [3, 5, 1, true], [4, 5, 1, false], [5, 5, 0, false], [4, 5, 0, true], [0, 9, null, false],
  ])('first call at version %i, current %i, max_staleness %s: stale %s', (version, current, k, stale) => {
    expect(isStale(version, current, k)).toBe(stale);
  });

  it('a sample whose first call is too old is dropped and replaced by a fresh attempt', () => {
    const state = run({ kind: 'mask' }, 1);
    addGroups(state, [task('a')], 1);
    const first = takeNext(state)!;
    state.policy = applyPolicyChange(state.policy, { version: 3 });
    expect(recordAttempt(state, first.attempt, 0, scored(1, 1))).toBe('stale');
    const second = takeNext(state)!;
    expect(second.attempt).toEqual({ group: 0, sample: 0, attempt: 2 });
    expect(recordAttempt(state, second.attempt, 3, scored(1, 3))).toBe('kept');
    expect(deliverComplete(state)[0]!.rows[0]).toMatchObject({ attempt: 2, policy_version: 3, tokens: '/logs/token-records.jsonl' });
    expect(state.counters.stale).toBe(1);
  });
});

describe('delivery cursor and acknowledgement', () => {
  it('groups after a cursor; an acknowledged group is never delivered again, whatever cursor is asked', () => {
    const state = run({ kind: 'mask' });
    addGroups(state, [task('a'), task('b'), task('c')], 1);
    drive(state, () => scored(1));
    deliverComplete(state);
    expect(groupsAfter(state, 0).map((g) => g.seq)).toEqual([1, 2, 3]);
    expect(groupsAfter(state, 1).map((g) => g.seq)).toEqual([2, 3]);
    expect(acknowledge(state, 2)).toBe(2);
    expect(groupsAfter(state, 0).map((g) => g.seq)).toEqual([3]);
    expect(acknowledge(state, 1)).toBe(2);
    expect(acknowledge(state, 99)).toBe(3);
    expect(finished(state)).toBe(true);
  });
});

describe('policy changes', () => {
  it.each<[object, string | null]>([
    [{ version: 2 }, null], [{ version: 0 }, 'older than the current 1'], [{ version: 1.5 }, 'whole number'],
    [{ endpoint: 'ftp://x' }, 'http(s) URL'], [{ endpoint: 'http://new:8000', model: 'm2' }, null], [{ sampling: 'hot' }, 'sampling must be an object'],
  ])('%j: %s', (change, problem) => {
    const current = { ...policy, version: 1 };
    const found = policyChangeProblem(current, change);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });

  it('every change bumps seq; drain and resume flip the flag once', () => {
    const changed = applyPolicyChange(policy, { version: 1 });
    expect(changed).toMatchObject({ version: 1, seq: 1 });
    const drained = setDraining(changed, true);
    expect(drained).toMatchObject({ draining: true, seq: 2 });
    expect(setDraining(drained, true)).toBe(drained);
  });

  it.each<[unknown, string | null]>([
    [{ kind: 'mask' }, null], [{ kind: 'partial' }, null], [{ kind: 'retry', maxRetries: 2 }, null],
    [{ kind: 'retry' }, 'max_retries'], [{ kind: 'drop' }, '"mask", "retry" or "partial"'], [null, 'must be an object'],
  ])('group policy %j: %s', (p, problem) => {
    const found = groupPolicyProblem(p);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });
});
