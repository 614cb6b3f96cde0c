// Shared or separate verification, as Harbor resolves it (spec/task-folder-verifiers.md § Shared and separate
// verification; spec/separate-verifier-environment.md, step_verifier_mode).
import type { VerifierMode } from './model.ts';
import { refuseSharedVerifierWithEnvironment } from './refusals/unsupported-settings.ts';
import type { StepToml, TaskToml } from './schema.ts';

export function resolveVerifierMode(doc: TaskToml): VerifierMode {
  const v = doc.verifier;
  if (v.environment_mode === 'shared' && v.environment !== undefined) refuseSharedVerifierWithEnvironment();
  return v.environment_mode ?? (v.environment !== undefined ? 'separate' : 'shared');
}

/** A step's mode: its own environment_mode, else separate with a [steps.verifier.environment], else the task's. */
export function stepVerifierMode(step: StepToml, taskMode: VerifierMode): VerifierMode {
  return step.verifier.environment_mode ?? (step.verifier.environment !== undefined ? 'separate' : taskMode);
}
