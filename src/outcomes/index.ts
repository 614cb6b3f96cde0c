// Every way an episode or an activity can end other than a reward, with the flags the rest of Berth reads.
// Import-free of the rest of src (DESIGN.md section 2): workflow code, activities and the client all use it.
export { FAILURE_KINDS, ALL_FAILURE_KINDS, isFailureKind, isMasked, isRetryable } from './failure-kinds.ts';
export type { FailureKind, FailureKindInfo } from './failure-kinds.ts';
