import type { ResultRow } from '../workflows/types.ts';
import { solutionStatus } from '../task/index.ts';
import { loadDatasetToRun } from './datasets.ts';
import type { SkippedEntry } from './results.ts';

export type ValidationStatus = 'solved' | 'solved-but-scored-0' | 'unvalidated' | 'failed' | 'masked';

export interface ValidationRow {
  task_id: string;
  status: ValidationStatus;
  reward: number | null;
  failure_kind: string | null;
  /** Why a task is unvalidated or failed. */
  reason?: string;
}

export interface ValidationPlan {
  /** Tasks whose every turn has a reference solution: the oracle runs them. */
  runnable: string[];
  /** Tasks it cannot validate, with the reason. */
  unvalidated: ValidationRow[];
  refused: SkippedEntry[];
}

/** Loads the dataset for the oracle and sorts its tasks into those it can validate and those it cannot. */
export async function validationPlan(dataset: string, imageAliases?: Record<string, string>): Promise<ValidationPlan> {
  const loaded = await loadDatasetToRun(dataset, { agent: 'oracle', imageAliases });
  const plan: ValidationPlan = { runnable: [], unvalidated: [], refused: loaded.refused };
  for (const task of loaded.tasks) {
    const s = solutionStatus(task);
    if (s === 'solvable') plan.runnable.push(task.id);
    else plan.unvalidated.push({ task_id: task.id, status: 'unvalidated', reward: null, failure_kind: null, reason: s.unvalidated });
  }
  return plan;
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
