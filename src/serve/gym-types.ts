// NeMo Gym 0.7.0's harbor agent server, by shape (responses_api_agents/harbor_agent_general/app.py,
// nemo_gym/base_resources_server.py, nemo_gym/openai_utils.py): the /run request and the verify response.

/** HarborRunRequest: BaseRunRequest (responses_create_params, _ng_rollout_id) with the task and its indices. */
export interface GymRunRequest {
  task_name: string;
  _ng_task_index: number;
  _ng_rollout_index: number;
  responses_create_params: Record<string, unknown> & { input: unknown };
  _ng_rollout_id?: string;
  [extra: string]: unknown;
}

/** One call's record as the gateway writes it (the token half's TokenRecord, the fields /run reads). */
export interface GymTokenRecord {
  model_call_id: string;
  prompt_token_ids: number[];
  generation_token_ids: number[];
  generation_log_probs: number[];
  output_items: Array<{ type?: string; role?: string; content?: unknown; tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string } }> }>;
  /** The messages the agent fed back before this call (tool outputs, user turns), when the record has them. */
  input_items?: Array<{ role?: string; tool_call_id?: string; content?: unknown }>;
  created_at?: number;
  capture_error?: string | null;
}

/** What /run needs of an episode's row. */
export interface GymEpisodeResult {
  workflowId: string;
  reward: number | null;
  mask_sample: boolean;
  failure_kind: string | null;
  failure_reason: string | null;
  response_text: string;
  usage?: { promptTokens: number; completionTokens: number; cachedTokens?: number };
  verifier_rewards?: Record<string, number>;
}
