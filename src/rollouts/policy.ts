// The trainer's policy: version, endpoint and drain, as the run workflow keeps it and the gateway watches it.
import type { GroupPolicy, PolicyState, Sampling } from './types.ts';

// The query the gateways watch and how long a drain takes to reach them are the token half's (one definition each).
export { POLICY_QUERY } from '../tokens/training.ts';
export { DRAIN_SETTLE_MS } from '../tokens/policy-state.ts';

export interface PolicyChange {
  version?: number;
  /** The endpoint's base URL, without /v1. */
  endpoint?: string;
  model?: string;
  sampling?: Sampling;
}

/** Why a policy change is refused, or null. Versions never go back: stamps and staleness count on that. */
export function policyChangeProblem(current: PolicyState, change: PolicyChange): string | null {
  if (change.version !== undefined) {
    if (!Number.isInteger(change.version) || change.version < 0) return `policy version must be a whole number ≥ 0, got ${JSON.stringify(change.version)}`;
    if (change.version < current.version) return `policy version ${change.version} is older than the current ${current.version}; versions only go up`;
  }
  if (change.endpoint !== undefined && !/^https?:\/\//.test(change.endpoint)) return `policy endpoint must be an http(s) URL, got ${JSON.stringify(change.endpoint)}`;
  if (change.model !== undefined && (typeof change.model !== 'string' || change.model === '')) return 'policy model must be a non-empty string';
  if (change.sampling !== undefined && (typeof change.sampling !== 'object' || change.sampling === null || Array.isArray(change.sampling))) return 'sampling must be an object of Chat Completions settings, e.g. {"temperature": 1.0}';
  return null;
}

export function applyPolicyChange(current: PolicyState, change: PolicyChange): PolicyState {
  return {
    ...current,
    ...(change.version !== undefined ? { version: change.version } : {}),
    ...(change.endpoint !== undefined || change.model !== undefined
      ? { endpoint: { ...current.endpoint, ...(change.endpoint !== undefined ? { baseUrl: change.endpoint } : {}), ...(change.model !== undefined ? { model: change.model } : {}) } }
      : {}),
    ...(change.sampling !== undefined ? { sampling: change.sampling } : {}),
    seq: current.seq + 1,
  };
}

export const setDraining = (current: PolicyState, draining: boolean): PolicyState =>
  current.draining === draining ? current : { ...current, draining, seq: current.seq + 1 };

/** Why a group policy is refused, or null. */
export function groupPolicyProblem(p: unknown): string | null {
  const gp = p as Partial<GroupPolicy> & { maxRetries?: unknown };
  if (!gp || typeof gp !== 'object') return 'group_policy must be an object: {"kind": "mask" | "retry" | "partial"}';
  if (gp.kind === 'mask' || gp.kind === 'partial') return null;
  if (gp.kind === 'retry') {
    return Number.isInteger(gp.maxRetries) && (gp.maxRetries as number) >= 1
      ? null : `group_policy retry needs max_retries, a whole number ≥ 1, got ${JSON.stringify(gp.maxRetries)}`;
  }
  return `group_policy.kind must be "mask", "retry" or "partial", got ${JSON.stringify(gp.kind)}`;
}
