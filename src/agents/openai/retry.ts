// The openai harness's wait between model call attempts; the policy (which answers are retried, how long, Retry-After)
// is src/outcomes/model-retry.ts, shared with the model gateway.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelRetryPolicy } from '../../outcomes/index.ts';

export type RetryOptions = Partial<ModelRetryPolicy>;

export async function wait(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await sleep(ms, undefined, { signal });
}
