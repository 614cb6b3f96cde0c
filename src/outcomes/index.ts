// Every way an episode or an activity can end other than a reward, with the flags the rest of Berth reads.
// Import-free of the rest of src (docs/design.md section 2): workflow code, activities, the gateway and the client use it.
export {
  FAILURE_KINDS, ALL_FAILURE_KINDS, MASKING_KINDS, TASK_ERRORS, TASK_ERROR_TYPES, FINAL_ERROR_TYPES, BAD_AGENT_ARGS,
  isFailureKind, isMasked, isMaskingKind, isRetryable, keepsVerifierReward,
} from './failure-kinds.ts';
export type { FailureKind, FailureKindInfo, TaskErrorType } from './failure-kinds.ts';
export { REGRADE_REFUSED } from './regrade.ts';
export { modelStatusMeaning, isTransientModelStatus, type ModelStatusMeaning } from './model-status.ts';
export { MODEL_RETRY, parseRetryAfter, retriesAfter, retryDelayMs, type ModelRetryPolicy } from './model-retry.ts';
