import { describe, expect, it } from 'vitest';
import { aggregateMetrics, gymEpisodeKey, gymRunRequestProblem, gymVerifyResponse, outputItemsOf } from '../../src/serve/gym-response.ts';
import type { GymEpisodeResult, GymRunRequest, GymTokenRecord } from '../../src/serve/gym-types.ts';

// Shapes from NeMo Gym 0.7.0 (PyPI wheel): responses_api_agents/harbor_agent_general/app.py (HarborRunRequest,
// success_response), nemo_gym/openai_utils.py (NeMoGymResponseOutputMessageForTraining, NeMoGymResponseFunctionToolCall,
// NeMoGymFunctionCallOutput), nemo_gym/base_resources_server.py (BaseVerifyResponse).
const request: GymRunRequest = {
  task_name: 'hello', _ng_task_index: 3, _ng_rollout_index: 1, _ng_rollout_id: 'abc',
  responses_create_params: { input: [{ role: 'user', content: 'q' }], temperature: 0.7, top_p: 0.9 },
};
const record = (id: string, extra: Partial<GymTokenRecord> = {}): GymTokenRecord => ({
  model_call_id: id, prompt_token_ids: [1, 2, 3], generation_token_ids: [4, 5], generation_log_probs: [-0.1, -0.2],
  output_items: [{ type: 'message', role: 'assistant', content: 'run ls', tool_calls: [{ id: 'call_1', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }] }],
  ...extra,
});
const scored: GymEpisodeResult = { workflowId: 'berth/gym/hello/id-abc', reward: 1, mask_sample: false, failure_kind: null, failure_reason: null, response_text: 'done' };

describe('NeMo Gym verify response from an episode', () => {
  it('each call: fed-back tool outputs, the assistant message with its exact tokens, then its function calls', () => {
    const items = outputItemsOf([record('c1'), record('c2', { input_items: [{ role: 'tool', tool_call_id: 'call_1', content: 'a.txt' }], output_items: [{ role: 'assistant', content: 'bye' }] })]);
    expect(items.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output', 'message']);
    expect(items[0]).toMatchObject({ role: 'assistant', status: 'completed', prompt_token_ids: [1, 2, 3], generation_token_ids: [4, 5], generation_log_probs: [-0.1, -0.2] });
    expect(items[0]!.content).toEqual([{ annotations: [], text: 'run ls', type: 'output_text', logprobs: null }]);
    expect(items[1]).toMatchObject({ name: 'bash', arguments: '{"cmd":"ls"}', call_id: 'call_1', status: 'completed' });
    expect(items[2]).toMatchObject({ call_id: 'call_1', output: 'a.txt', status: 'completed' });
  });

  it('a tool result whose id names no call of the previous answer (Gemini numbers its calls per request) answers them in order', () => {
    const two = { type: 'message', role: 'assistant', content: '', tool_calls: [{ id: 'call_12_0', function: { name: 'a' } }, { id: 'call_12_1', function: { name: 'b' } }] };
    const fed = [{ role: 'tool', tool_call_id: 'call_1_0', content: 'x' }, { role: 'tool', tool_call_id: 'call_1_1', content: 'y' }];
    const items = outputItemsOf([record('c1', { output_items: [two] }), record('c2', { input_items: fed, output_items: [{ role: 'assistant', content: 'ok' }] })]);
    expect(items.filter((i) => i.type === 'function_call_output').map((i) => [i.call_id, i.output])).toEqual([['call_12_0', 'x'], ['call_12_1', 'y']]);
    // Ids that name the calls are kept as they are, whatever their order.
    const swapped = outputItemsOf([record('c1', { output_items: [two] }), record('c2', { input_items: [{ ...fed[1]!, tool_call_id: 'call_12_1' }, { ...fed[0]!, tool_call_id: 'call_12_0' }] })]);
    expect(swapped.filter((i) => i.type === 'function_call_output').map((i) => [i.call_id, i.output])).toEqual([['call_12_1', 'y'], ['call_12_0', 'x']]);
  });

  it('a call the engine returned no tokens for keeps a plain message: no made-up token fields', () => {
    const [msg] = outputItemsOf([record('c1', { generation_token_ids: [], generation_log_probs: [], capture_error: 'no token ids' })]);
    expect(msg).not.toHaveProperty('generation_token_ids');
  });

  it.each<[string, GymEpisodeResult, { reward: number; mask_sample: boolean; failure_kind: string | null }]>([
    ['scored', scored, { reward: 1, mask_sample: false, failure_kind: null }],
    ['masked: mask_sample true and its kind beside the float NeMo Gym requires', { ...scored, reward: null, mask_sample: true, failure_kind: 'provider_unavailable', failure_reason: 'sandbox lost' },
      { reward: 0, mask_sample: true, failure_kind: 'provider_unavailable' }],
  ])('%s', (_name, result, expected) => {
    const v = gymVerifyResponse(request, result, [record('c1')], 'Say hello\n', 'policy', 1000);
    expect(v).toMatchObject({ ...expected, task_name: 'hello', _ng_task_index: 3, _ng_rollout_index: 1 });
    expect(v).not.toHaveProperty('_ng_rollout_id');
    expect(v.responses_create_params).toEqual({ ...request.responses_create_params, input: [{ role: 'user', content: 'Say hello\n', type: 'message' }] });
    expect(v.response).toMatchObject({ object: 'response', model: 'policy', temperature: 0.7, top_p: 0.9, tool_choice: 'auto', tools: [], parallel_tool_calls: false });
  });

  it.each<[unknown, string | null]>([
    [request, null], [{ ...request, task_name: '' }, 'task_name'], [{ ...request, _ng_task_index: 'x' }, '_ng_task_index'],
    [{ ...request, responses_create_params: {} }, 'responses_create_params'], [null, 'JSON object'],
  ])('request %#: %s', (body, problem) => {
    const found = gymRunRequestProblem(body);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toContain(problem);
  });

  it('the same request is the same episode: by rollout id, else by task and rollout index', () => {
    expect(gymEpisodeKey(request)).toBe('id-abc');
    const { _ng_rollout_id: _, ...noId } = request;
    expect(gymEpisodeKey(noId as GymRunRequest)).toBe('t3-r1');
    // NeMo Gym's re-dispatch of a failed rollout (resume) is a fresh attempt; attempt 0 is the first dispatch.
    expect(gymEpisodeKey({ ...noId, _ng_attempt_index: 0 } as GymRunRequest)).toBe('t3-r1');
    expect(gymEpisodeKey({ ...noId, _ng_attempt_index: 2 } as GymRunRequest)).toBe('t3-r1-a2');
    expect(gymEpisodeKey({ ...request, _ng_attempt_index: 1 })).toBe('id-abc-a1');
  });

  it('aggregate metrics leave masked rows out of the mean and count them apart', () => {
    const m = aggregateMetrics({ verify_responses: [
      { _ng_task_index: 0, reward: 1 }, { _ng_task_index: 0, reward: 0 }, { _ng_task_index: 1, reward: 0, mask_sample: true }, { _ng_task_index: 1, reward: 0 },
    ] });
    expect(m.agent_metrics).toMatchObject({ 'mean/reward': 1 / 3, num_scored: 3, num_masked: 1, num_tasks: 2, 'pass@1/accuracy': 0.5 });
    expect(m.group_level_metrics).toEqual([
      { _ng_task_index: 0, 'mean/reward': 0.5, num_scored: 2, num_masked: 0 }, { _ng_task_index: 1, 'mean/reward': 0, num_scored: 1, num_masked: 1 },
    ]);
  });
});
