// The rollout run's state as pure functions (the run workflow holds one RunState and carries it across
// continue-as-new): groups of n samples, which attempt to start next, what a finished episode does to its group under
// the run's group policy and staleness, sequence numbers for delivery, and acknowledgement.
import type { Group, GroupPolicy, PolicyState, RowTraining, RunCounters, RunTask, SampleRow } from './types.ts';

/** One episode to start: sample `sample` of group `group`, attempt `attempt` (1 first). */
export interface Attempt {
  group: number;
  sample: number;
  attempt: number;
}

interface SampleSlot {
  /** Attempts started so far (staleness replacements included). */
  attempts: number;
  /** Masked attempts that counted against the retry budget. */
  maskedAttempts: number;
  row?: SampleRow;
}

export interface OpenGroup {
  group: number;
  task: RunTask;
  slots: SampleSlot[];
}

export interface RunState {
  groupPolicy: GroupPolicy;
  maxStaleness: number | null;
  policy: PolicyState;
  nextGroup: number;
  open: OpenGroup[];
  queue: Attempt[];
  /** Delivered groups not yet acknowledged, in seq order. */
  waiting: Group[];
  lastSeq: number;
  acked: number;
  counters: RunCounters;
}

/** What an episode's row says, trimmed to what a group needs (the workflow reads it from the child's result). */
export interface EpisodeOutcome {
  reward: number | null;
  mask_sample: boolean;
  failure_kind: string | null;
  failure_reason: string | null;
  workflow_id: string;
  logs_dir: string | null;
  training?: RowTraining;
}

export function newRunState(args: { groupPolicy: GroupPolicy; maxStaleness?: number | null; policy: PolicyState }): RunState {
  return {
    groupPolicy: args.groupPolicy, maxStaleness: args.maxStaleness ?? null, policy: args.policy,
    nextGroup: 0, open: [], queue: [], waiting: [], lastSeq: 0, acked: 0,
    counters: { started: 0, scored: 0, masked: 0, retried: 0, stale: 0, groupsDelivered: 0 },
  };
}

/** Adds one group of n samples per task (tasks in order), and queues their first attempts. */
export function addGroups(state: RunState, tasks: readonly RunTask[], n: number): number[] {
  const added: number[] = [];
  for (const task of tasks) {
    const group = state.nextGroup++;
    state.open.push({ group, task, slots: Array.from({ length: n }, () => ({ attempts: 0, maskedAttempts: 0 })) });
    for (let sample = 0; sample < n; sample++) state.queue.push({ group, sample, attempt: 1 });
    added.push(group);
  }
  return added;
}

/** Takes the next attempt to start, counting it as started on its slot. */
export function takeNext(state: RunState): { attempt: Attempt; task: RunTask } | undefined {
  const attempt = state.queue.shift();
  if (!attempt) return undefined;
  const open = state.open.find((g) => g.group === attempt.group);
  if (!open) return takeNext(state);
  open.slots[attempt.sample]!.attempts = attempt.attempt;
  state.counters.started++;
  return { attempt, task: open.task };
}

/** The version a sample was generated under: its first call's stamp, else the version it started with. */
export function sampleVersion(outcome: EpisodeOutcome | undefined, startVersion: number): number {
  return outcome?.training?.first_version ?? startVersion;
}

/** Stale: its first call is older than the current version minus max_staleness. */
export function isStale(version: number, current: number, maxStaleness: number | null): boolean {
  return maxStaleness !== null && version < current - maxStaleness;
}

export type Verdict = 'kept' | 'masked' | 'retry' | 'stale' | 'ignored';

/**
 * A finished attempt (outcome undefined: the episode failed without a row, which masks like any failure on Berth's
 * side). Decides the sample: keep it, replace it (stale, or `retry` with budget left), or a masked placeholder.
 */
export function recordAttempt(state: RunState, at: Attempt, startVersion: number, outcome: EpisodeOutcome | undefined): Verdict {
  const open = state.open.find((g) => g.group === at.group);
  const slot = open?.slots[at.sample];
  if (!open || !slot || slot.row || slot.attempts !== at.attempt) return 'ignored';
  const masked = !outcome || outcome.mask_sample;
  const version = sampleVersion(outcome, startVersion);
  if (!masked && isStale(version, state.policy.version, state.maxStaleness)) {
    state.counters.stale++;
    state.queue.unshift({ group: at.group, sample: at.sample, attempt: at.attempt + 1 });
    return 'stale';
  }
  if (masked) {
    slot.maskedAttempts++;
    const policy = state.groupPolicy;
    if (policy.kind === 'retry' && slot.maskedAttempts <= policy.maxRetries) {
      state.counters.retried++;
      state.queue.unshift({ group: at.group, sample: at.sample, attempt: at.attempt + 1 });
      return 'retry';
    }
    state.counters.masked++;
  } else state.counters.scored++;
  slot.row = sampleRow(open.task.taskId, at, version, outcome, !masked);
  return masked ? 'masked' : 'kept';
}

function sampleRow(taskId: string, at: Attempt, version: number, outcome: EpisodeOutcome | undefined, valid: boolean): SampleRow {
  const training = outcome?.training;
  const tokens = training?.tokens && outcome?.logs_dir ? `${outcome.logs_dir.replace(/\/$/, '')}/${training.tokens}` : null;
  return {
    task_id: taskId, group: at.group, sample: at.sample, attempt: at.attempt, valid,
    reward: valid ? outcome!.reward : null,
    mask_sample: !valid,
    failure_kind: outcome ? outcome.failure_kind : 'provider_unavailable',
    failure_reason: outcome ? outcome.failure_reason : 'the episode workflow failed without a row (a failure on Berth\'s side)',
    workflow_id: outcome?.workflow_id ?? null,
    logs_dir: outcome?.logs_dir ?? null,
    tokens,
    policy_version: version,
    ...(training ? { training } : {}),
  };
}

/**
 * Moves every complete group to delivery, each under the next sequence number. Under `mask` (and `retry` once out of
 * attempts) a masked sample masks its group: every row of it is invalid. Under `partial` rows keep their own mask.
 */
export function deliverComplete(state: RunState): Group[] {
  const delivered: Group[] = [];
  state.open = state.open.filter((g) => {
    if (!g.slots.every((s) => s.row)) return true;
    const rows = g.slots.map((s) => s.row!);
    const anyMasked = rows.some((r) => r.mask_sample);
    const masked = anyMasked && state.groupPolicy.kind !== 'partial';
    const group: Group = {
      seq: ++state.lastSeq, group: g.group, task_id: g.task.taskId, masked,
      rows: masked ? rows.map((r) => ({ ...r, valid: false })) : rows,
    };
    state.waiting.push(group);
    state.counters.groupsDelivered++;
    delivered.push(group);
    return false;
  });
  return delivered;
}

/** The trainer acknowledged every group up to `seq`: they are dropped and never delivered again. */
export function acknowledge(state: RunState, seq: number): number {
  const upTo = Math.min(Math.max(seq, state.acked), state.lastSeq);
  state.acked = upTo;
  state.waiting = state.waiting.filter((g) => g.seq > upTo);
  return upTo;
}

/** Groups to stream after cursor `after` (never one at or below the acknowledged cursor). */
export function groupsAfter(state: RunState, after: number, limit = Infinity): Group[] {
  const from = Math.max(after, state.acked);
  return state.waiting.filter((g) => g.seq > from).slice(0, limit);
}

/** Nothing left to run or deliver: every group delivered and acknowledged. */
export function finished(state: RunState): boolean {
  return state.open.length === 0 && state.queue.length === 0 && state.waiting.length === 0;
}

/** Queued attempts dropped (a cancelled run starts nothing more). */
export function dropQueue(state: RunState): void {
  state.queue = [];
}
