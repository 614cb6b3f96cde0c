// The steps of a multi-step task (spec/multi-step-tasks.md): instruction, timeouts and users over the task's,
// [steps.verifier].env over [verifier].env, tests/ folders layered, and the solution each step's oracle runs.
import type { BuildContext } from './build-context.ts';
import { stripCanary } from './instruction.ts';
import { inSolution, inTask, SOLUTION_FILES, stepLayout, TASK_LAYOUT } from './layout.ts';
import type { Solution, Step, StepSolution } from './model.ts';
import { requireStepFiles } from './refusals/missing-files.ts';
import type { TaskToml } from './schema.ts';
import type { TaskSnapshot } from './snapshot.ts';

/** Which file a solution folder (relative) holds: solve.sh wins over answer.md. */
export function solutionIn(snap: TaskSnapshot, dir: string): 'solve_sh' | 'answer_md' | null {
  if (snap.files.has(inSolution(dir, SOLUTION_FILES.solveSh))) return 'solve_sh';
  if (snap.files.has(inSolution(dir, SOLUTION_FILES.answerMd))) return 'answer_md';
  return null;
}

export function buildSolution(doc: TaskToml, snap: TaskSnapshot): Solution {
  const has = snap.dirs.has(TASK_LAYOUT.solutionDir);
  return {
    dir: has ? inTask(snap.root, TASK_LAYOUT.solutionDir) : null,
    kind: has ? solutionIn(snap, TASK_LAYOUT.solutionDir) : null,
    env: { ...doc.solution.env },
  };
}

export function buildSteps(doc: TaskToml, snap: TaskSnapshot, solution: Solution, ctx: BuildContext): Step[] {
  const root = snap.root;
  const tm = ctx.defaults.timeout_multiplier;
  const agentTimeout = doc.agent.timeout_sec;
  return (doc.steps ?? []).map((s) => {
    const paths = stepLayout(s.name);
    const instr = requireStepFiles(snap, s.name);
    const own = snap.files.has(paths.testSh);
    const testsDirs: string[] = [];
    if (snap.dirs.has(TASK_LAYOUT.testsDir)) testsDirs.push(inTask(root, TASK_LAYOUT.testsDir));
    if (snap.dirs.has(paths.testsDir)) testsDirs.push(inTask(root, paths.testsDir));
    let stepSolution: StepSolution | null = null;
    if (snap.dirs.has(paths.solutionDir)) stepSolution = { dir: inTask(root, paths.solutionDir), kind: solutionIn(snap, paths.solutionDir), from: 'step' };
    else if (solution.dir !== null && solution.kind !== null) stepSolution = { dir: solution.dir, kind: solution.kind, from: 'task' };
    const minReward = s.min_reward ?? null;
    return {
      name: s.name,
      dir: inTask(root, paths.dir),
      instruction: stripCanary(instr.text ?? ''),
      agent: { timeout_sec: (s.agent.timeout_sec ?? agentTimeout) * tm, user: s.agent.user ?? doc.agent.user ?? null },
      verifier: {
        timeout_sec: s.verifier.timeout_sec * tm,
        user: s.verifier.user ?? doc.verifier.user ?? null,
        env: { ...doc.verifier.env, ...s.verifier.env },
        tests_dirs: testsDirs,
        script: inTask(root, own ? paths.testSh : TASK_LAYOUT.testSh),
      },
      min_reward: typeof minReward === 'number' || minReward === null ? minReward : { ...minReward },
      solution: stepSolution,
    };
  });
}

/** The transcript seeding the agent: trajectory.json, or the first step's for a multi-step task. */
export function seedTrajectoryOf(snap: TaskSnapshot, steps: readonly Step[]): string | null {
  if (snap.files.has(TASK_LAYOUT.trajectory)) return inTask(snap.root, TASK_LAYOUT.trajectory);
  const first = steps[0];
  if (first !== undefined && snap.files.has(stepLayout(first.name).trajectory)) return inTask(snap.root, stepLayout(first.name).trajectory);
  return null;
}
