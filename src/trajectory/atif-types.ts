// ATIF v1.7 (Agent Trajectory Interchange Format) as TypeScript types: the transcript every agent writes to
// /logs/agent/trajectory.json and that verifiers read. From Harbor 0.25 Every object is
// closed: keys not listed here are invalid; custom data goes in `extra`.

export const ATIF_SCHEMA_VERSION = 'ATIF-v1.7';
export const ATIF_SCHEMA_VERSIONS = [
  'ATIF-v1.0',
  'ATIF-v1.1',
  'ATIF-v1.2',
  'ATIF-v1.3',
  'ATIF-v1.4',
  'ATIF-v1.5',
  'ATIF-v1.6',
  'ATIF-v1.7',
] as const;
export type AtifSchemaVersion = (typeof ATIF_SCHEMA_VERSIONS)[number];

export type AtifExtra = Record<string, unknown>;

export const ATIF_IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

export type AtifContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { media_type: (typeof ATIF_IMAGE_MEDIA_TYPES)[number]; path: string } };

export type AtifSource = 'system' | 'user' | 'agent';

export interface AtifAgent {
  name: string;
  version: string;
  model_name?: string;
  /** OpenAI function-tool objects. */
  tool_definitions?: Array<Record<string, unknown>>;
  extra?: AtifExtra;
}

export interface AtifToolCall {
  tool_call_id: string;
  function_name: string;
  arguments: Record<string, unknown>;
  extra?: AtifExtra;
}

export interface AtifSubagentTrajectoryRef {
  trajectory_id?: string;
  trajectory_path?: string;
  session_id?: string;
  extra?: AtifExtra;
}

export interface AtifObservationResult {
  /** Must name a tool_call_id of the same step. */
  source_call_id?: string;
  content?: string | AtifContentPart[] | null;
  subagent_trajectory_ref?: AtifSubagentTrajectoryRef[];
  extra?: AtifExtra;
}

export interface AtifObservation {
  results: AtifObservationResult[];
}

export interface AtifMetrics {
  /** Includes cached tokens. */
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_tokens?: number;
  cost_usd?: number;
  prompt_token_ids?: number[];
  completion_token_ids?: number[];
  logprobs?: number[];
  extra?: AtifExtra;
}

export interface AtifStep {
  /** 1, 2, 3… in order. */
  step_id: number;
  source: AtifSource;
  message: string | AtifContentPart[];
  /** ISO-8601. */
  timestamp?: string;
  observation?: AtifObservation;
  llm_call_count?: number;
  is_copied_context?: boolean;
  extra?: AtifExtra;
  // Agent steps only:
  model_name?: string;
  reasoning_effort?: string | number;
  reasoning_content?: string;
  tool_calls?: AtifToolCall[];
  metrics?: AtifMetrics;
}

export const AGENT_ONLY_STEP_FIELDS = [
  'model_name',
  'reasoning_effort',
  'reasoning_content',
  'tool_calls',
  'metrics',
] as const satisfies ReadonlyArray<keyof AtifStep>;

export interface AtifFinalMetrics {
  total_prompt_tokens?: number;
  total_completion_tokens?: number;
  total_cached_tokens?: number;
  total_cost_usd?: number;
  total_steps?: number;
  extra?: AtifExtra;
}

export interface AtifTrajectory {
  schema_version: AtifSchemaVersion;
  /** Run-scoped; required up to v1.6. */
  session_id?: string;
  /** Required, and unique, on embedded subagent trajectories. */
  trajectory_id?: string;
  agent: AtifAgent;
  steps: AtifStep[];
  notes?: string;
  final_metrics?: AtifFinalMetrics;
  continued_trajectory_ref?: string;
  extra?: AtifExtra;
  subagent_trajectories?: AtifTrajectory[];
}
