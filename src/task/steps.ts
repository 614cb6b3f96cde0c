// The steps of a multi-step task (Multi-Step Harbor Tasks): instruction, timeouts and users over the task's,
// [steps.verifier].env over [verifier].env, tests/ folders layered, and the solution each step's oracle runs; each
// step's verifier mode, separate environment and image, phase networks, workdir/, setup.sh, healthcheck and
// artifacts, as Harbor runs them (Harbor 0.25).
import type { BuildContext } from './build-context.ts';
import { stripCanary } from './instruction.ts';
import { inSolution, inTask, SOLUTION_FILES, stepLayout, TASK_LAYOUT } from './layout.ts';
import type { Artifact, Environment, Solution, Step, StepSolution } from './model.ts';
import { policyAt } from './network.ts';
import { checkArtifact } from './refusals/invalid-values.ts';
import { stepKey } from './refusals/keys.ts';
import { requireStepFiles } from './refusals/missing-files.ts';
import type { ArtifactToml, TaskToml } from './schema.ts';
import type { TaskSnapshot } from './snapshot.ts';
import { stepVerifierMode } from './verifier-mode.ts';
import { collectHookOf, separateVerifierOf } from './verifier-plan.ts';

export function normaliseArtifact(a: ArtifactToml): Artifact {
  if (typeof a === 'string') return { source: a, destination: null, service: 'main', exclude: [] };
  return { source: a.source, destination: a.destination ?? null, service: a.service, exclude: [...a.exclude] };
}

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

/** `environment` is the task's effective [environment]: the baseline network, and what a mode-only separate step copies. */
export function buildSteps(doc: TaskToml, snap: TaskSnapshot, solution: Solution, ctx: BuildContext, environment: Environment): Step[] {
  const root = snap.root;
  const tm = ctx.defaults.timeout_multiplier;
  const agentTimeout = doc.agent.timeout_sec;
  const taskAgentNet = policyAt(doc.agent, false, 'agent');
  const taskVerifierNet = policyAt(doc.verifier, false, 'verifier');
  return (doc.steps ?? []).map((s, index) => {
    const paths = stepLayout(s.name);
    const key = stepKey(index, s.name);
    const separate = separateVerifierOf(doc, { index, toml: s }, environment, snap, ctx);
    const instr = requireStepFiles(snap, s.name, separate !== null);
    const own = snap.files.has(paths.testSh);
    const testsDirs: string[] = [];
    if (snap.dirs.has(TASK_LAYOUT.testsDir)) testsDirs.push(inTask(root, TASK_LAYOUT.testsDir));
    if (snap.dirs.has(paths.testsDir)) testsDirs.push(inTask(root, paths.testsDir));
    let stepSolution: StepSolution | null = null;
    if (snap.dirs.has(paths.solutionDir)) stepSolution = { dir: inTask(root, paths.solutionDir), kind: solutionIn(snap, paths.solutionDir), from: 'step' };
    else if (solution.dir !== null && solution.kind !== null) stepSolution = { dir: solution.dir, kind: solution.kind, from: 'task' };
    const minReward = s.min_reward ?? null;
    const artifacts = s.artifacts.map(normaliseArtifact);
    artifacts.forEach((a, j) => checkArtifact(a, `${key}.artifacts[${j}]`, TASK_LAYOUT.taskToml));
    // Phase networks: the step's own table, else the task's phase table, else the baseline of the phase's sandbox.
    const agentNet = policyAt(s.agent, false, `${key}.agent`) ?? taskAgentNet ?? environment;
    const verifierNet = policyAt(s.verifier, false, `${key}.verifier`) ?? taskVerifierNet ?? (separate?.environment ?? environment);
    const hasScript = own || snap.files.has(TASK_LAYOUT.testSh);
    return {
      name: s.name,
      dir: inTask(root, paths.dir),
      instruction: stripCanary(instr.text ?? ''),
      agent: {
        timeout_sec: (s.agent.timeout_sec ?? agentTimeout) * tm, user: s.agent.user ?? doc.agent.user ?? null,
        network_mode: agentNet.network_mode, allowed_hosts: agentNet.allowed_hosts,
      },
      verifier: {
        timeout_sec: s.verifier.timeout_sec * tm,
        user: s.verifier.user ?? doc.verifier.user ?? null,
        env: { ...doc.verifier.env, ...s.verifier.env },
        collect: s.verifier.collect.map((c) => collectHookOf(c, s.name)),
        tests_dirs: testsDirs,
        script: hasScript ? inTask(root, own ? paths.testSh : TASK_LAYOUT.testSh) : null,
        mode: stepVerifierMode(doc.verifier, s.verifier),
        environment: separate?.environment ?? null,
        env_table: separate?.envTable ?? null,
        image: separate?.image ?? null,
        network_mode: verifierNet.network_mode,
        allowed_hosts: verifierNet.allowed_hosts,
      },
      workdir: snap.dirs.has(paths.workdirDir) ? inTask(root, paths.workdirDir) : null,
      setup_script: snap.files.has(paths.setupSh),
      healthcheck: s.healthcheck ? { ...s.healthcheck } : null,
      artifacts,
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
