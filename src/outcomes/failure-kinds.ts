// Every failure kind a Berth row can carry, and whether it masks the row (docs/design.md section 4 "Failure kinds").
// Scored kinds count in the score as 0; masked kinds keep the row in rollouts.jsonl but leave it out of the
// score, because the failure was Berth's, the sandbox's or the task's, not the agent's. `retryable` says whether a
// new attempt of the episode (`berth retry`) can go differently: a transient failure, not a verdict or a task's own.
//
// This module has no imports so that workflow code, activities, the gateway and the client all read the same table.

export interface FailureKindInfo {
  /**
   * `'first-turn'`: masked when it ends the episode's first turn (no agent has run yet, so it is the task's own fault),
   * scored 0 on a later turn (an earlier agent may have caused it: masking would let it escape its score).
   */
  readonly masked: boolean | 'first-turn';
  readonly retryable: boolean;
  /** The agent's turn ended this way and its verifier then ran: the verifier's reward stands (Multi-Step Harbor Tasks § Reward roll-up). */
  readonly rewardStands?: true;
  readonly meaning: string;
}

export const FAILURE_KINDS = {
  'harbor:missing_reward': {
    masked: false,
    retryable: false,
    meaning: 'test.sh ran (any exit code) but wrote neither reward.json nor reward.txt',
  },
  'harbor:invalid_reward': {
    masked: false,
    retryable: false,
    meaning: 'a reward file exists but is empty, malformed, not finite, or its components have no finite sum',
  },
  'harbor:verifier_timeout': {
    masked: false,
    retryable: false,
    meaning: 'test.sh ran past its timeout without writing a reward',
  },
  verifier_error: {
    masked: true,
    retryable: false,
    meaning: 'test.sh could not start (for example bash or timeout missing from the image)',
  },
  provider_unavailable: {
    masked: true,
    retryable: true,
    meaning: 'the sandbox was lost or a transfer to or from it failed',
  },
  'harbor:overlay_failed': {
    masked: true,
    retryable: true,
    meaning: 'a RUN line of an overlay Dockerfile failed in the sandbox',
  },
  'harbor:entrypoint_failed': {
    masked: true,
    retryable: true,
    meaning: "the image's ENTRYPOINT died during the rollout",
  },
  'harbor:seed_failed': {
    masked: true,
    retryable: true,
    meaning: 'the seed failed for good (unset variable, healthcheck retries spent, image missing)',
  },
  'harbor:episode_deadline': {
    masked: true,
    retryable: true,
    meaning: 'the episode ran past its overall budget',
  },
  'agent:context_length': {
    masked: false,
    retryable: false,
    rewardStands: true,
    meaning: "the conversation outgrew the model's context window; the turn ended there and was verified as it stood",
  },
  'agent:max_tokens': {
    masked: false,
    retryable: false,
    rewardStands: true,
    meaning: 'the episode used more model tokens than --max-tokens; the turn was ended and verified as it stood',
  },
  'agent:max_cost': {
    masked: false,
    retryable: false,
    rewardStands: true,
    meaning: 'the episode\'s model calls cost more than --max-cost; the turn was ended and verified as it stood',
  },
  'agent:install_failed': {
    masked: true,
    retryable: false,
    meaning: "the agent could not be installed into the task's image (for example no suitable Python in it)",
  },
  'agent:bad_credentials': {
    masked: true,
    retryable: true,
    meaning: 'the model provider refused the worker\'s key (checked once before the batch; this is a key that stopped working later)',
  },
  'agent:unknown_model': {
    masked: true,
    retryable: false,
    meaning: 'the model provider does not know the model given with --model',
  },
  'agent:model_rejected': {
    masked: true,
    retryable: false,
    meaning: 'the model endpoint refused the request with an HTTP 4xx other than 401, 403, 404, 408, 429 or context length: a setting is wrong',
  },
  'harbor:step_setup_failed': {
    masked: 'first-turn',
    retryable: false,
    meaning: "a step's workdir/setup.sh exited non-zero or its [steps.healthcheck] never passed; no later step runs. On the first " +
      "step it is the task's fault (masked); on a later one the earlier agents may have caused it, so the turn scores 0",
  },
} as const satisfies Record<string, FailureKindInfo>;

export type FailureKind = keyof typeof FAILURE_KINDS;

export const ALL_FAILURE_KINDS: readonly FailureKind[] = Object.keys(FAILURE_KINDS) as FailureKind[];

export function isFailureKind(value: unknown): value is FailureKind {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(FAILURE_KINDS, value);
}

/** Whether `kind` masks the row when it ends turn `turn` (0-based; the flag of most kinds does not depend on it). */
export function isMasked(kind: FailureKind, turn = 0): boolean {
  const masked: FailureKindInfo['masked'] = FAILURE_KINDS[kind].masked;
  return masked === 'first-turn' ? turn === 0 : masked;
}

/** Whether a turn that carries `kind` (null: none) keeps its verifier's reward: no kind, or the agent's own ending. */
export function keepsVerifierReward(kind: string | null): boolean {
  if (kind === null) return true;
  if (!isFailureKind(kind)) return false;
  const info: FailureKindInfo = FAILURE_KINDS[kind];
  return info.rewardStands === true;
}

export function isRetryable(kind: FailureKind): boolean {
  return FAILURE_KINDS[kind].retryable;
}

/**
 * The kinds that may mask a row (on some turn): an activity raising one ends its turn (masked, or scored 0 where the
 * flag says so for a later turn), never retried by Temporal.
 */
export const MASKING_KINDS: readonly FailureKind[] = ALL_FAILURE_KINDS.filter((k) => FAILURE_KINDS[k].masked !== false);

/** The batch's probe refusing the agent's --agent-arg values before any work starts: a refusal, never a row's kind. */
export const BAD_AGENT_ARGS = 'agent:bad_args' as const;

/** Errors that refuse a task rather than end a row (it goes to skipped.json): retrying changes nothing. */
export const TASK_ERRORS = {
  'berth:task_refused': 'the task folder breaks a rule of the spec or needs something Berth does not support yet',
  'berth:digest_moved': 'the task folder changed since the batch started, so its episodes would not be comparable',
} as const;

export type TaskErrorType = keyof typeof TASK_ERRORS;

export const TASK_ERROR_TYPES: readonly TaskErrorType[] = Object.keys(TASK_ERRORS) as TaskErrorType[];

/** Error types no activity retry can change: every masking kind and every task error. */
export const FINAL_ERROR_TYPES: readonly string[] = [...MASKING_KINDS, ...TASK_ERROR_TYPES];

/** A kind that may mask (MASKING_KINDS): whether it does on the turn it ended is isMasked(kind, turn). */
export function isMaskingKind(value: unknown): value is FailureKind {
  return isFailureKind(value) && MASKING_KINDS.includes(value);
}
