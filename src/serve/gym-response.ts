// The verify response NeMo Gym's harbor agent answers /run with, built from an episode's row and its token records.
// Differences from NeMo Gym's own agent, on purpose: a failure on Berth's side answers mask_sample true with its
// failure kind (NeMo Gym's answers reward 0.0 with `_ng_failure_class`, which biases a group's advantages).
import type { GymEpisodeResult, GymRunRequest, GymTokenRecord } from './gym-types.ts';

type Item = Record<string, unknown>;

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : typeof (p as Item)?.text === 'string' ? (p as Item).text as string : '')).join('');
  return '';
};

/** NeMo Gym's id style: a prefix and a short hex suffix, unique within the response. */
const itemId = (prefix: string, callId: string, i: number): string => `${prefix}_${callId.replace(/[^A-Za-z0-9]/g, '').slice(-12) || 'x'}${i}`;

/**
 * Output items in order: what the agent fed back before each call (function_call_output for a tool's answer, an
 * input message for a user turn), the call's assistant message with its exact tokens
 * (NeMoGymResponseOutputMessageForTraining), then the call's function calls. A call whose tokens the engine did not
 * return keeps a plain assistant message (no token fields rather than made-up ones).
 */
export function outputItemsOf(records: readonly GymTokenRecord[]): Item[] {
  const out: Item[] = [];
  let asked: string[] = [];
  records.forEach((r, i) => {
    let answered = 0;
    for (const [k, fed] of (r.input_items ?? []).entries()) {
      if (fed.role === 'tool') {
        // A result names its call by id; one whose id names no call the previous answer made (Gemini's calls carry no
        // ids, so its translation numbers them per request) answers those calls in order.
        const callId = fed.tool_call_id !== undefined && asked.includes(fed.tool_call_id) ? fed.tool_call_id : asked[answered] ?? fed.tool_call_id ?? `call_${i}_${k}`;
        answered++;
        out.push({ call_id: callId, output: textOf(fed.content), type: 'function_call_output', id: itemId('fco', r.model_call_id, k), status: 'completed' });
      } else if (fed.role === 'user' || fed.role === 'system' || fed.role === 'developer') {
        out.push({ role: fed.role, content: textOf(fed.content), type: 'message' });
      }
    }
    const generated = r.output_items.find((o) => (o.role ?? 'assistant') === 'assistant') ?? {};
    const exact = !r.capture_error && r.generation_token_ids.length > 0 && r.generation_log_probs.length === r.generation_token_ids.length;
    out.push({
      id: itemId('msg', r.model_call_id, i),
      content: [{ annotations: [], text: textOf(generated.content), type: 'output_text', logprobs: null }],
      role: 'assistant', status: 'completed', type: 'message',
      ...(exact ? { prompt_token_ids: r.prompt_token_ids, generation_token_ids: r.generation_token_ids, generation_log_probs: r.generation_log_probs } : {}),
    });
    asked = [];
    for (const [k, call] of (generated.tool_calls ?? []).entries()) {
      const callId = call.id ?? `call_${i}_${k}`;
      asked.push(callId);
      out.push({
        arguments: call.function?.arguments ?? '{}', call_id: callId, name: call.function?.name ?? '',
        type: 'function_call', id: itemId('fc', r.model_call_id, k), status: 'completed',
      });
    }
  });
  return out;
}

/** Output for an agent that calls no model (oracle): its final text as one assistant message, no token fields. */
const textOnly = (text: string, id: string): Item[] =>
  (text ? [{ id: `msg_${id}`, content: [{ annotations: [], text, type: 'output_text', logprobs: null }], role: 'assistant', status: 'completed', type: 'message' }] : []);

/**
 * HarborVerifyResponse: the request as sent (aliases kept) with `responses_create_params.input` set to the task's
 * instruction, `response` (a Responses-API object), `reward`, and Berth's failure fields. NeMo Gym requires `reward`
 * to be a float, so a masked sample carries 0.0 beside mask_sample true and its kind: never a bare 0.
 */
export function gymVerifyResponse(req: GymRunRequest, result: GymEpisodeResult, records: readonly GymTokenRecord[], instruction: string, model: string, nowSec: number): Item {
  const params = req.responses_create_params;
  const output = records.length > 0 ? outputItemsOf(records) : textOnly(result.response_text, result.workflowId.replace(/[^A-Za-z0-9]/g, '').slice(-12));
  const usage = result.usage;
  const response: Item = {
    id: `berth-${result.workflowId}`, created_at: nowSec, model, object: 'response', output,
    parallel_tool_calls: false, temperature: params.temperature ?? null, tool_choice: 'auto', tools: [], top_p: params.top_p ?? null,
    status: result.mask_sample && output.length === 0 ? 'failed' : 'completed',
    ...(usage ? {
      usage: {
        input_tokens: usage.promptTokens, input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0, cache_write_tokens: 0 },
        output_tokens: usage.completionTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.promptTokens + usage.completionTokens,
      },
    } : {}),
  };
  const { _ng_rollout_id: _dropped, ...echoed } = req;
  return {
    ...echoed,
    responses_create_params: { ...params, input: [{ role: 'user', content: instruction, type: 'message' }] },
    response,
    reward: result.mask_sample ? 0.0 : (result.reward ?? 0.0),
    mask_sample: result.mask_sample,
    failure_kind: result.failure_kind,
    failure_reason: result.failure_reason,
    ...(result.verifier_rewards ? { verifier_rewards: result.verifier_rewards } : {}),
    berth_workflow_id: result.workflowId,
  };
}

/** Why a /run body is refused (NeMo Gym answers 422 for a body its model rejects), or null. */
export function gymRunRequestProblem(body: unknown): string | null {
  const b = body as Partial<GymRunRequest> | null;
  if (!b || typeof b !== 'object') return 'the /run body must be a JSON object (NeMo Gym HarborRunRequest)';
  if (typeof b.task_name !== 'string' || b.task_name === '') return 'task_name must name a task of the dataset berth.toml [serve] names';
  if (!Number.isInteger(b._ng_task_index)) return '_ng_task_index must be a whole number';
  if (!Number.isInteger(b._ng_rollout_index)) return '_ng_rollout_index must be a whole number';
  const p = b.responses_create_params as Item | undefined;
  if (!p || typeof p !== 'object' || !('input' in p)) return 'responses_create_params must be an object with input (NeMoGymResponseCreateParamsNonStreaming)';
  if (b._ng_rollout_id !== undefined && typeof b._ng_rollout_id !== 'string') return '_ng_rollout_id must be a string';
  return null;
}

/**
 * The episode a /run request is: the same request (same rollout id, or the same task and indices) is the same
 * durable episode, so NeMo Gym posting it again after a restart waits for that episode instead of running another.
 */
export function gymEpisodeKey(req: GymRunRequest): string {
  // NeMo Gym's own identity of a request (nemo_gym/rollout_correlation.py): a re-dispatch after a failure carries
  // `_ng_attempt_index` n > 0 and is a fresh attempt, "-a<n>" after the indices.
  const attempt = Number.isInteger(req['_ng_attempt_index']) && (req['_ng_attempt_index'] as number) > 0 ? `-a${req['_ng_attempt_index'] as number}` : '';
  const raw = `${req._ng_rollout_id ? `id-${req._ng_rollout_id}` : `t${req._ng_task_index}-r${req._ng_rollout_index}`}${attempt}`;
  return raw.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 120);
}

type VerifyRow = { task_name?: string; _ng_task_index?: number; reward?: number | null; mask_sample?: boolean };

/**
 * /aggregate_metrics (AggregateMetricsRequest -> AggregateMetrics): per task and overall, the mean reward of scored
 * rows and pass@k over them (score `accuracy` = reward, as NeMo Gym's harbor agent scores), with masked rows counted
 * apart, never as 0.
 */
export function aggregateMetrics(body: { verify_responses?: VerifyRow[] }): { group_level_metrics: Item[]; agent_metrics: Record<string, number>; key_metrics: Record<string, number> } {
  const rows = body.verify_responses ?? [];
  const tasks = new Map<string, { index: number | undefined; rewards: number[]; masked: number }>();
  for (const r of rows) {
    const key = String(r._ng_task_index ?? r.task_name ?? '');
    const t = tasks.get(key) ?? { index: r._ng_task_index, rewards: [], masked: 0 };
    if (r.mask_sample || typeof r.reward !== 'number') t.masked++;
    else t.rewards.push(r.reward);
    tasks.set(key, t);
  }
  const mean = (v: number[]) => (v.length ? v.reduce((a, x) => a + x, 0) / v.length : 0);
  const scored = [...tasks.values()].flatMap((t) => t.rewards);
  const k = Math.min(...[...tasks.values()].filter((t) => t.rewards.length > 0).map((t) => t.rewards.length));
  const agent: Record<string, number> = {
    'mean/reward': mean(scored), 'mean/accuracy': mean(scored), num_rollouts: rows.length, num_scored: scored.length,
    num_masked: rows.length - scored.length, num_tasks: tasks.size,
  };
  if (Number.isFinite(k)) {
    const counted = [...tasks.values()].filter((t) => t.rewards.length >= k);
    agent[`pass@${k}/accuracy`] = mean(counted.map((t) => (t.rewards.slice(0, k).some((x) => x > 0) ? 1 : 0)));
  }
  const groups = [...tasks.values()].map((t) => ({
    ...(t.index !== undefined ? { _ng_task_index: t.index } : {}), 'mean/reward': mean(t.rewards), num_scored: t.rewards.length, num_masked: t.masked,
  }));
  return { group_level_metrics: groups, agent_metrics: agent, key_metrics: { 'mean/reward': agent['mean/reward']!, num_masked: agent.num_masked! } };
}
