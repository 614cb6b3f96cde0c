import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, TimeoutFailure } from '@temporalio/workflow';
import { isMasked, isMaskingKind, type FailureKind } from '../outcomes/index.ts';
import type { SandboxRef, SeededSandboxDetail, TurnOutcome } from './types.ts';

// The lists derive from the one table of src/outcomes (docs/design.md section 4, Failure kinds).
export { MASKING_KINDS, TASK_ERROR_TYPES, FINAL_ERROR_TYPES } from '../outcomes/index.ts';

/**
 * The kind a failed activity stands for: typed failures keep theirs; a host that never picks up
 * or stops heartbeating is a lost sandbox. Anything else is a bug and fails the workflow.
 */
export function maskingFailure(err: unknown): { kind: FailureKind; reason: string } {
  let cause: unknown = err;
  // A failed child (the openai turn) wraps the activity failure that ended it.
  while (cause instanceof ChildWorkflowFailure || cause instanceof ActivityFailure) cause = cause.cause;
  if (cause instanceof ApplicationFailure && isMaskingKind(cause.type)) {
    return { kind: cause.type, reason: cause.message };
  }
  if (cause instanceof TimeoutFailure) {
    return { kind: 'provider_unavailable', reason: `the sandbox host did not answer in time (${timeoutName(cause.timeoutType)})` };
  }
  throw err;
}

/**
 * What an activity failed with: the ActivityFailure's cause, or the error itself where a local activity's failure
 * reached the workflow unwrapped (the plan's, patch episode-v8).
 */
export function failureCause(err: unknown): unknown {
  return err instanceof ActivityFailure ? err.cause : err;
}

/**
 * A seed failure the planner found (an unset `${VAR}`, Task Folder Verifiers § Environment variables and
 * secrets): the episode is masked at once, before a slot is reserved or a sandbox created. Null for anything else.
 */
export function plannedSeedFailure(err: unknown): { kind: string; reason: string; step: string | null } | null {
  const cause = failureCause(err);
  if (!(cause instanceof ApplicationFailure) || cause.type !== 'harbor:seed_failed') return null;
  const step = (cause.details?.[0] as { step?: unknown } | undefined)?.step;
  return { kind: cause.type, reason: cause.message, step: typeof step === 'string' ? step : null };
}

/**
 * The sandbox a seedThenAgentTurn failure names when its agent part failed (the seed had succeeded); undefined when
 * the seed itself failed, or the host never answered.
 */
export function seededSandboxOf(err: unknown): SandboxRef | undefined {
  const cause = err instanceof ActivityFailure ? err.cause : undefined;
  if (!(cause instanceof ApplicationFailure)) return undefined;
  const detail = (cause.details ?? []).find((d): d is SeededSandboxDetail => typeof d === 'object' && d !== null && 'seededSandbox' in d);
  return detail?.seededSandbox;
}

function timeoutName(t: unknown): string {
  return ({ 1: 'start to close', 2: 'schedule to start', 3: 'schedule to close', 4: 'heartbeat' } as Record<number, string>)[Number(t)] ?? String(t);
}

export function maskedTurn(step: string, kind: string, reason: string): TurnOutcome {
  return { step, reward: null, verifier_rewards: {}, failure_kind: kind, failure_reason: reason, masked: true, response_text: '', timings: {} };
}

/**
 * Turn `turn` (0-based) ended by a failure of `kind`: masked where the kind masks on that turn, else a turn with no
 * valid reward, 0 under every key (a later step's setup the earlier agents may have broken).
 */
export function failedTurn(step: string, kind: FailureKind, reason: string, turn: number): TurnOutcome {
  if (isMasked(kind, turn)) return maskedTurn(step, kind, reason);
  return { ...maskedTurn(step, kind, reason), reward: 0, masked: false };
}
