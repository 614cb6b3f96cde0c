import type { ResultRow } from '../workflows/types.ts';

export type ValidationStatus = 'solved' | 'solved-but-scored-0' | 'unvalidated' | 'failed' | 'masked';

export interface ValidationRow {
  task_id: string;
  status: ValidationStatus;
  reward: number | null;
  failure_kind: string | null;
  /** Why a task is unvalidated or failed. */
  reason?: string;
}

/** What the oracle's run says about a task's reference solution. */
export function validationOf(taskId: string, row: ResultRow | undefined): ValidationRow {
  if (!row) return { task_id: taskId, status: 'failed', reward: null, failure_kind: null, reason: 'the episode workflow failed or was cancelled' };
  if (row.mask_sample) return { task_id: taskId, status: 'masked', reward: null, failure_kind: row.failure_kind, reason: row.failure_reason ?? undefined };
  if ((row.reward ?? 0) >= 1) return { task_id: taskId, status: 'solved', reward: row.reward, failure_kind: null };
  return { task_id: taskId, status: 'solved-but-scored-0', reward: row.reward, failure_kind: row.failure_kind, reason: row.failure_reason ?? undefined };
}

/** 0: every validatable task solved and none refused; 1: otherwise; 2: nothing loaded. */
export function validateExitCode(rows: ValidationRow[], refused: number): 0 | 1 | 2 {
  if (rows.length === 0) return 2;
  const validatable = rows.filter((r) => r.status !== 'unvalidated');
  return refused === 0 && validatable.every((r) => r.status === 'solved') ? 0 : 1;
}
