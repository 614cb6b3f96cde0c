// How a rollout run names and builds its episodes: pure, shared by the run workflow and the client.
import type { Attempt } from './run-state.ts';
import type { EpisodeTraining, GatewayPolicyState, PolicyState, RunTask } from './types.ts';

export const ROLLOUT_RUN_PREFIX = 'berth-rollout/';

/** The run's workflow id: the idempotency key itself, so the same key can only ever name one run. */
export const runWorkflowId = (key: string): string => `${ROLLOUT_RUN_PREFIX}${key}`;

/** Why an idempotency key is refused, or null (it becomes part of workflow ids and file names). */
export function runKeyProblem(key: unknown): string | null {
  if (typeof key === 'string' && /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(key)) return null;
  return `the run key must be 1-128 characters of letters, digits, "_", "." or "-" (starting with a letter or digit), got ${JSON.stringify(key)}`;
}

/** The batch id every episode of the run carries (results folder, search attributes). */
export const runBatchId = (key: string): string => `rollout-${key}`;

/** One episode of the run: group, sample and attempt in its id, so a replacement never collides with its original. */
export const runEpisodeId = (batchId: string, taskId: string, at: Attempt): string =>
  `berth/${batchId}/${taskId}/g${at.group}-${at.sample + 1}${at.attempt > 1 ? `~a${at.attempt}` : ''}`;

/** The policy as the gateways read it from the run's query. */
export const gatewayPolicy = (p: PolicyState): GatewayPolicyState =>
  ({ version: p.version, endpoint: p.endpoint.baseUrl, model: p.endpoint.model, draining: p.draining, seq: p.seq });

/** An episode's training settings: the policy now, its sampling, and the run whose policy query to follow. */
export const episodeTraining = (runId: string, policy: PolicyState): EpisodeTraining => ({
  runWorkflowId: runId, endpoint: policy.endpoint.baseUrl, model: policy.endpoint.model, version: policy.version, sampling: policy.sampling,
  ...(policy.endpoint.apiKeyVar ? { apiKeyVar: policy.endpoint.apiKeyVar } : {}),
});

export type { RunTask };
