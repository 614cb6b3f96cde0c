// What an episode in training mode carries (small, in history), what the serve side's run workflow answers about
// the policy, and what the episode's row says about its tokens.
import type { LinkSettings, TokenRollout } from './lineage.ts';
import type { PolicyState } from './policy-state.ts';
import type { TokenRecord } from './records.ts';
import type { Sampling } from './vllm.ts';

/** The query the run workflow (berth serve, `runWorkflowId`) answers with the policy in force. */
export const POLICY_QUERY = 'policy';

export const TOKEN_ROLLOUT_FILE = 'token-rollout.json';

/** EpisodeInput.training: the policy when the episode started, and where its changes are read. */
export interface EpisodeTraining {
  runWorkflowId: string;
  /** The policy's Chat Completions base URL, with or without /v1. */
  endpoint: string;
  model: string;
  version: number;
  sampling: Sampling & Record<string, unknown>;
  /** A variable of the worker's environment holding the endpoint's key. */
  apiKeyVar?: string;
  link?: Partial<LinkSettings>;
}

/** What the run workflow's `policy` query answers. */
export interface RunPolicy {
  version: number;
  endpoint: string;
  model: string;
  draining: boolean;
  seq?: number;
}

const baseOf = (endpoint: string): string => endpoint.replace(/\/+$/, '').replace(/\/v1$/, '');

export function policyStateOf(run: RunPolicy, training: Pick<EpisodeTraining, 'sampling' | 'apiKeyVar'>): PolicyState {
  return {
    version: run.version, draining: run.draining, sampling: training.sampling,
    endpoint: { baseUrl: baseOf(run.endpoint), model: run.model, ...(training.apiKeyVar ? { apiKeyVar: training.apiKeyVar } : {}) },
  };
}

export const initialPolicyState = (t: EpisodeTraining): PolicyState =>
  policyStateOf({ version: t.version, endpoint: t.endpoint, model: t.model, draining: false }, t);

/**
 * Agents whose model calls, if any, bypass the gateway: no token could be captured exactly. The oracle and nop call no
 * model at all and run (their rows have no calls and no tokens: a trainer's plumbing can be checked without a policy).
 */
const UNCAPTURED = new Set(['command']);

/** The agents that call no model (their rows have no calls): a run of them needs no policy endpoint to answer. */
const NO_MODEL = new Set(['oracle', 'nop']);

export const callsPolicy = (agent: string): boolean => !NO_MODEL.has(agent) && !UNCAPTURED.has(agent);

/** Why an agent cannot run in training mode (its model calls would leave no exact tokens), or null when it can. */
export function trainingRefusal(agent: string): string | null {
  if (UNCAPTURED.has(agent)) {
    return `the ${agent} agent runs a CLI of the image whose model calls, if any, bypass Berth's gateway, so no exact tokens could be captured: training runs need an agent that calls the policy through the gateway (openai, or an installed agent such as claude-code, codex, gemini-cli)`;
  }
  return null;
}

/** ResultRow.training: where the episode's tokens are and whether they are exact. */
export interface RowTraining {
  /** Relative to the episode's logs dir; null when no call was captured. */
  tokens: string | null;
  calls: number;
  first_version: number | null;
  last_version: number | null;
  exact: boolean;
  refusal?: string;
}

export function rowTrainingOf(records: readonly TokenRecord[], rollout: TokenRollout, recordsFile: string): RowTraining {
  const missing = records.filter((r) => r.capture_error !== null);
  const refusal = rollout.masked ?? (missing.length ? `${missing.length} of ${records.length} calls have no tokens: ${missing[0]!.capture_error}` : undefined);
  return {
    tokens: records.length ? recordsFile : null,
    calls: records.length,
    first_version: records[0]?.policy_version ?? null,
    last_version: records.at(-1)?.policy_version ?? null,
    exact: refusal === undefined,
    ...(refusal !== undefined ? { refusal } : {}),
  };
}
