// What an HTTP error status from a model endpoint means, for every caller that retries one (the openai harness's
// call loop and the model gateway): transient statuses are retried with backoff; any other 4xx is a setting that is
// wrong, ends the call at once and masks the episode with its failure kind.
import type { FailureKind } from './failure-kinds.ts';

export type ModelStatusMeaning = 'transient' | Extract<FailureKind, 'agent:bad_credentials' | 'agent:unknown_model' | 'agent:model_rejected'>;

/** 429 (rate limit), 408 (request timeout) and 5xx are transient; 401/403 a refused key; 404 an unknown model. */
export function modelStatusMeaning(status: number): ModelStatusMeaning {
  if (status === 429 || status === 408 || status >= 500) return 'transient';
  if (status === 401 || status === 403) return 'agent:bad_credentials';
  if (status === 404) return 'agent:unknown_model';
  return 'agent:model_rejected';
}

export const isTransientModelStatus = (status: number): boolean => modelStatusMeaning(status) === 'transient';
