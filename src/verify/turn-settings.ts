// What grades one turn: the single-step [verifier] or a step's [steps.verifier], with templates resolved.
import { type Artifact, type CollectHook, type Environment, type NetworkPolicy, type Task, type VerifierImage, type VerifierMode } from '../task/index.ts';

export interface TurnVerifier {
  /** Effective (already multiplied by the loader). */
  timeoutSec: number;
  /** `[verifier].user` (or the step's), as written; null when unset. */
  explicitUser: string | null;
  /** Raw env table ([verifier].env, or the step's layered table). */
  envTable: Readonly<Record<string, string>>;
  /** Folders uploaded to /tests, in order. */
  testsDirs: string[];
  /** The host file that becomes /tests/test.sh (made executable), or null (a Python verifier, or none). */
  testScript: string | null;
  /** A Python verifier: the dataset-root module to place under /tests/.ng, or null for tests/verifier.py. */
  python: { datasetVerifier: string | null } | null;
  inputs: readonly string[];
  /** nemo_gym.data.tasks.harbor.verifier_env, step_verifier_mode (the task's own for a single-step task). */
  mode: VerifierMode;
  /** Separate mode: the environment test.sh's sandbox starts from, and its image. */
  environment: Environment | null;
  /** Separate mode: how task.toml names the table `environment.env` comes from, for messages. */
  environmentEnvTable: string | null;
  image: VerifierImage | null;
  /** The hooks run before the turn's artifacts and verifier: the task's `[[verifier.collect]]`, then the step's own. */
  collect: readonly CollectHook[];
  /** What is collected after the turn: the task's artifacts, then the step's own. */
  artifacts: readonly Artifact[];
  /** The verifier phase's network. */
  network: NetworkPolicy;
}

export function turnVerifier(task: Task, stepIndex: number | null): TurnVerifier {
  const v = task.verifier;
  if (stepIndex !== null) {
    const step = task.steps[stepIndex];
    if (!step) throw new Error(`task ${task.id} has no step ${stepIndex} (it has ${task.steps.length})`);
    const user = step.verifier.user ?? v.user;
    return {
      timeoutSec: step.verifier.timeout_sec,
      explicitUser: user === null ? null : String(user),
      envTable: step.verifier.env,
      testsDirs: [...step.verifier.tests_dirs],
      testScript: step.verifier.script,
      python: null,
      inputs: v.inputs,
      mode: step.verifier.mode,
      environment: step.verifier.environment,
      environmentEnvTable: step.verifier.env_table,
      image: step.verifier.image,
      collect: [...v.collect, ...step.verifier.collect],
      artifacts: [...task.artifacts, ...step.artifacts],
      network: { network_mode: step.verifier.network_mode, allowed_hosts: step.verifier.allowed_hosts },
    };
  }
  const python = v.kind === 'python' ? { datasetVerifier: v.python_in_task_tests ? null : v.script } : null;
  return {
    timeoutSec: v.timeout_sec,
    explicitUser: v.user === null ? null : String(v.user),
    envTable: v.env,
    testsDirs: v.tests_dir ? [v.tests_dir] : [],
    testScript: v.kind === 'test_sh' ? v.script : null,
    python,
    inputs: v.inputs,
    mode: v.mode,
    environment: v.environment,
    environmentEnvTable: v.env_table,
    image: v.image,
    collect: v.collect,
    artifacts: task.artifacts,
    network: { network_mode: v.network_mode, allowed_hosts: v.allowed_hosts },
  };
}

