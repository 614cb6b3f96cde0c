import { ApplicationFailure } from '@temporalio/activity';
import { ImageBuildFailed, ImageMissing, SandboxLost, SeedFailed } from '../sandbox/index.ts';
import { DatasetRefusal, TaskRefusal } from '../task/index.ts';
import { VerificationMasked } from '../verify/index.ts';
import { AgentConfigError, ModelRequestRejected, SolutionEnvUnset } from '../agents/index.ts';
import { AgentLayerMissing, EntrypointDied } from '../host/errors.ts';
import { FINAL_ERROR_TYPES, modelStatusMeaning, type FailureKind, type TaskErrorType } from '../outcomes/index.ts';

/**
 * The failure the workflow branches on for a kind of src/outcomes: masking kinds and task errors are final
 * (FINAL_ERROR_TYPES); only a kind the table lets a new attempt change is left to Temporal's retry.
 */
/** The failure type of a seed that found no layer of its installed agent on this host (src/workflows/episode.ts installs it, then seeds again). */
export const LAYER_MISSING = 'berth:agent_layer_missing';

export function outcomeFailure(kind: FailureKind | TaskErrorType, message: string, ...details: unknown[]): ApplicationFailure {
  return ApplicationFailure.create({ type: kind, message, nonRetryable: FINAL_ERROR_TYPES.includes(kind), details });
}

/**
 * Turns a layer's typed error into the failure the workflow branches on: masking kinds and task
 * errors are final; anything else is thrown as is and retried by Temporal.
 */
export function asActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof AgentLayerMissing) return ApplicationFailure.nonRetryable(err.message, LAYER_MISSING);
  if (err instanceof EntrypointDied) return outcomeFailure('harbor:entrypoint_failed', err.message);
  if (err instanceof VerificationMasked) return outcomeFailure(err.kind, err.reason);
  if (err instanceof SolutionEnvUnset || err instanceof AgentConfigError) return outcomeFailure('harbor:seed_failed', err.message);
  if (err instanceof SeedFailed) return outcomeFailure(err.kind, err.message, err.output);
  if (err instanceof ImageMissing || err instanceof ImageBuildFailed) return outcomeFailure('harbor:seed_failed', err.message);
  if (err instanceof SandboxLost) return outcomeFailure('provider_unavailable', `sandbox lost: ${(err as Error).message}`);
  if (err instanceof TaskRefusal || err instanceof DatasetRefusal) return outcomeFailure('berth:task_refused', err.message);
  if (err instanceof ModelRequestRejected) {
    const meaning = modelStatusMeaning(err.status);
    if (meaning !== 'transient') return outcomeFailure(meaning, err.message);
  }
  return err;
}

export async function typed<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asActivityFailure(err);
  }
}
