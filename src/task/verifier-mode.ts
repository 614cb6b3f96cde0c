// Shared or separate verification, as Harbor resolves it (Task Folder Verifiers § Shared and separate
// verification; nemo_gym.data.tasks.harbor.verifier_env: step_verifier_mode, step_verifier_environment,
// step_verifier_build_context; Harbor's models/task/verifier_mode.py): pure functions over task.toml's tables, so
// one task may mix shared and separate steps.
import type { VerifierMode } from './model.ts';
import { refuseSharedVerifierWithEnvironment } from './refusals/unsupported-settings.ts';
import type { TaskToml } from './schema.ts';

/** The task's mode; a shared [verifier] that declares its own environment is refused, as Harbor refuses it. */
export function resolveVerifierMode(doc: TaskToml): VerifierMode {
  if (doc.verifier.environment_mode === 'shared' && doc.verifier.environment !== undefined) refuseSharedVerifierWithEnvironment('verifier');
  return taskVerifierMode(doc.verifier);
}

/** The parts of `[verifier]` or `[steps.verifier]` that decide the mode. */
export interface VerifierModeTables<E> {
  readonly environment_mode?: VerifierMode;
  readonly environment?: E;
}

/** One table's own mode: explicit, else separate when it declares an environment, else unset. */
function ownMode(v: VerifierModeTables<unknown>): VerifierMode | undefined {
  return v.environment_mode ?? (v.environment !== undefined ? 'separate' : undefined);
}

/** The task's mode (`HarborTaskConfig.is_shared_verifier`): its own, else shared. */
export function taskVerifierMode(verifier: VerifierModeTables<unknown>): VerifierMode {
  return ownMode(verifier) ?? 'shared';
}

/** step_verifier_mode: the step's explicit mode, else separate when it declares an environment, else the task's. */
export function stepVerifierMode(verifier: VerifierModeTables<unknown>, step: VerifierModeTables<unknown>): VerifierMode {
  return ownMode(step) ?? taskVerifierMode(verifier);
}

/** Where a separate verifier's environment table comes from. */
export type VerifierEnvironmentSource = 'step' | 'verifier' | 'environment';

/**
 * step_verifier_environment: `[steps.verifier.environment]`, else `[verifier.environment]`, else a copy of
 * `[environment]`; null when the step verifies in shared mode. `step` null is the single-step task's rule.
 */
export function stepVerifierEnvironment<E>(
  task: { readonly environment: E; readonly verifier: VerifierModeTables<E> },
  step: VerifierModeTables<E> | null,
): { table: E; source: VerifierEnvironmentSource } | null {
  const mode = step === null ? taskVerifierMode(task.verifier) : stepVerifierMode(task.verifier, step);
  if (mode !== 'separate') return null;
  if (step?.environment !== undefined) return { table: step.environment, source: 'step' };
  if (task.verifier.environment !== undefined) return { table: task.verifier.environment, source: 'verifier' };
  return { table: task.environment, source: 'environment' };
}

/** step_verifier_build_context: `steps/<name>/tests` when that folder exists, else the task's `tests`. */
export function stepVerifierBuildContext(dirs: ReadonlySet<string>, stepName: string): string {
  const own = `steps/${stepName}/tests`;
  return dirs.has(own) ? own : 'tests';
}
