import { ApplicationFailure } from '@temporalio/activity';
import { ImageBuildFailed, ImageMissing, SandboxLost, SeedFailed, isLossError } from '../sandbox/index.ts';
import { DatasetRefusal, TaskRefusal } from '../task/index.ts';
import { VerificationMasked } from '../verify/index.ts';
import { AgentConfigError, SolutionEnvUnset } from '../agents/index.ts';

/**
 * Turns a layer's typed error into the failure the workflow branches on: masking kinds and task
 * errors are final; anything else is thrown as is and retried by Temporal.
 */
export function asActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof VerificationMasked) return ApplicationFailure.nonRetryable(err.reason, err.kind);
  if (err instanceof SolutionEnvUnset || err instanceof AgentConfigError) return ApplicationFailure.nonRetryable(err.message, 'harbor:seed_failed');
  if (err instanceof SeedFailed) return ApplicationFailure.nonRetryable(err.message, err.kind, err.output);
  if (err instanceof ImageMissing || err instanceof ImageBuildFailed) return ApplicationFailure.nonRetryable(err.message, 'harbor:seed_failed');
  if (err instanceof SandboxLost || isLossError(err)) {
    return ApplicationFailure.nonRetryable(`sandbox lost: ${(err as Error).message}`, 'provider_unavailable');
  }
  if (err instanceof TaskRefusal || err instanceof DatasetRefusal) return ApplicationFailure.nonRetryable(err.message, 'berth:task_refused');
  return err;
}

export async function typed<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asActivityFailure(err);
  }
}
