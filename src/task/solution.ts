// Which reference solution the oracle runs for a turn (Multi-Step Harbor Tasks, Per-step reference
// solutions), and whether `berth validate` can validate a task at all.
import { stepLayout } from './layout.ts';
import type { Task } from './model.ts';

export type TurnSolution =
  | { kind: 'solve_sh' | 'answer_md'; dir: string; from: 'task' | 'step' }
  | { kind: 'missing'; reason: string };

export function solutionForTurn(task: Task, stepIndex: number): TurnSolution {
  if (!task.multi_step) {
    const s = task.solution;
    if (s.dir === null) return { kind: 'missing', reason: 'the task has no solution/ folder' };
    if (s.kind === null) return { kind: 'missing', reason: 'solution/ holds neither solve.sh nor answer.md' };
    return { kind: s.kind, dir: s.dir, from: 'task' };
  }
  const step = task.steps[stepIndex];
  if (!step) {
    throw new RangeError(`task ${task.id} has ${task.steps.length} step(s); there is no step index ${stepIndex}`);
  }
  const s = step.solution;
  if (s === null) {
    return {
      kind: 'missing',
      reason: `step ${step.name} has no solution/ folder and the task has no solution/ with solve.sh or answer.md`,
    };
  }
  if (s.kind === null) {
    return {
      kind: 'missing',
      reason: `${stepLayout(step.name).solutionDir}/ has neither solve.sh nor answer.md (a step's own folder is never covered by the task's solution/)`,
    };
  }
  return { kind: s.kind, dir: s.dir, from: s.from };
}

export type SolutionStatus = 'solvable' | { unvalidated: string };

/** 'solvable' when every turn has a reference solution; otherwise the first reason it has not. */
export function solutionStatus(task: Task): SolutionStatus {
  const turns = task.multi_step ? task.steps.length : 1;
  for (let i = 0; i < turns; i++) {
    const s = solutionForTurn(task, i);
    if (s.kind === 'missing') return { unvalidated: s.reason };
  }
  return 'solvable';
}
