// What grades one turn: the single-step [verifier] or a step's [steps.verifier], with templates resolved.
import { templateVariable, type Artifact, type Environment, type NetworkPolicy, type Task, type VerifierImage, type VerifierMode } from '../task/index.ts';

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
  /** separate-verifier-environment.md, step_verifier_mode (the task's own for a single-step task). */
  mode: VerifierMode;
  /** Separate mode: the environment test.sh's sandbox starts from, and its image. */
  environment: Environment | null;
  /** Separate mode: how task.toml names the table `environment.env` comes from, for messages. */
  environmentEnvTable: string | null;
  image: VerifierImage | null;
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
    artifacts: task.artifacts,
    network: { network_mode: v.network_mode, allowed_hosts: v.allowed_hosts },
  };
}

/** Host values shorter than this are not redacted: hiding every "1" or "64" would mangle logs, not protect them. */
export const MIN_REDACTED_HOST_VALUE = 4;

export type ResolvedEnv =
  | { ok: true; values: Record<string, string>; sensitive: string[] }
  | { ok: false; key: string; variable: string };

/**
 * Resolves whole-value `${VAR}` / `${VAR:-default}` templates. `secrets` (when given) win over `hostEnv`.
 * `sensitive` lists the values read from either source (a default written in task.toml is not a secret).
 */
export function resolveEnv(
  table: Readonly<Record<string, string>>,
  hostEnv: Readonly<Record<string, string | undefined>>,
  secrets: Readonly<Record<string, string>> = {},
): ResolvedEnv {
  const values: Record<string, string> = {};
  const sensitive: string[] = [];
  for (const [key, raw] of Object.entries(table)) {
    const t = templateVariable(raw);
    if (t === null) {
      values[key] = raw;
      continue;
    }
    const secret = secrets[t.name];
    const found = secret ?? hostEnv[t.name];
    if (found === undefined || (found === '' && t.fallback !== null)) {
      if (t.fallback === null) return { ok: false, key, variable: t.name };
      values[key] = t.fallback;
      continue;
    }
    values[key] = found;
    if (secret !== undefined || found.length >= MIN_REDACTED_HOST_VALUE) sensitive.push(found);
  }
  return { ok: true, values, sensitive };
}
