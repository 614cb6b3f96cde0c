// The gateway in training mode against a fake vLLM policy (a real HTTP server with a real tokenizer): each dialect's
// scripted agent, whole and streamed, with a tool call; token records stamped with the policy version; exact prefix
// linking across an agent's calls; a retried call and a rewritten history kept apart; drain holding calls; the probe
// refusing raw logprobs and an engine without token ids.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ModelGateway, probePolicyEndpoint, type Scope } from '../../src/gateway/index.ts';
import { linkCalls, LocalPolicyState, type Dialect, type TokenRecord } from '../../src/tokens/index.ts';
import { DIALECTS, headersOf, pathOf, requestOf, turnOf, type Turn } from '../helpers/dialect-clients.ts';
import { FakePolicy } from '../helpers/fake-policy.ts';

const script = ({ messages }: { messages: Array<Record<string, unknown>> }) => (messages.at(-1)?.['role'] === 'tool'
  ? { content: 'All done.' }
  : { content: 'Let me look.', toolCalls: [{ name: 'bash', arguments: { cmd: 'ls' } }] });

let engine: FakePolicy;
let gateway: ModelGateway;
let policy: LocalPolicyState;
let records: TokenRecord[];
let scope: Scope;

beforeAll(async () => {
  engine = await new FakePolicy({ model: 'policy-7b', version: 'w1', script }).start();
  gateway = new ModelGateway({ host: '127.0.0.1', retry: { baseDelayMs: 5 } });
  await gateway.start();
});

afterAll(async () => {
  await gateway.stop();
  await engine.stop();
});

function open(): void {
  records = [];
  policy = new LocalPolicyState({ version: 1, draining: false, endpoint: { baseUrl: engine.url, model: 'policy-7b' }, sampling: { temperature: 0.7, max_tokens: 512 } });
  scope = gateway.register({ label: 'training', upstreams: {}, prices: {}, training: { rolloutId: 'rollout-1', turn: 0, policy, onRecord: (r) => records.push(r) } });
}

afterEach(() => gateway.revoke(scope.token));

async function call(dialect: Dialect, stream: boolean, history: Array<{ turn: Turn; results: string[] }>, user = 'List the files.'): Promise<Turn> {
  const res = await fetch(`${gateway.url}${pathOf(dialect, stream)}`, { method: 'POST', headers: headersOf(dialect, scope.token), body: JSON.stringify(requestOf(dialect, stream, user, history)) });
  const body = await res.text();
  expect(res.status, body).toBe(200);
  expect(res.headers.get('content-type')).toBe(stream ? 'text/event-stream' : 'application/json');
  return turnOf(dialect, stream, body);
}

describe('training mode, each dialect', () => {
  for (const dialect of DIALECTS) {
    for (const stream of [false, true]) {
      it(`${dialect}${stream ? ', streamed' : ''}: the agent gets its tool call, each call leaves exact tokens, and the two calls link into one sequence`, async () => {
        open();
        const seenBefore = engine.seen.length;
        const first = await call(dialect, stream, []);
        expect(first).toMatchObject({ text: 'Let me look.', calls: [{ name: 'bash', args: { cmd: 'ls' } }] });
        const second = await call(dialect, stream, [{ turn: first, results: ['a.txt\nb.txt'] }]);
        expect(second).toEqual({ text: 'All done.', calls: [] });

        // What the engine was asked: the policy's model, token ids and logprobs, the trainer's sampling.
        const asked = engine.seen.slice(seenBefore).map((s) => s.body);
        expect(asked).toHaveLength(2);
        for (const a of asked) {
          expect(a).toMatchObject({ model: 'policy-7b', logprobs: true, top_logprobs: 0, return_token_ids: true, temperature: 0.7, max_tokens: 512 });
          expect(a['stream']).toBeUndefined();
        }
        expect(records).toHaveLength(2);
        records.forEach((r, i) => {
          expect(r).toMatchObject({ schema_version: 1, rollout_id: 'rollout-1', model: 'policy-7b', policy_version: 1, policy_version_end: 1, dialect, stream, capture_error: null });
          expect(r.prompt_token_ids).toEqual(engine.seen[seenBefore + i]!.promptTokenIds);
          expect(r.generation_token_ids.length).toBe(r.generation_log_probs.length);
          expect(r.generation_log_probs.every((l) => l < 0)).toBe(true);
        });
        expect(records[0]!.finish_reason).toBe('tool_calls');
        // What each prompt added after the last assistant message, in Chat form: the first call's whole prompt, then
        // the tool's output the second call answers (a verify response's function_call_output).
        expect(records[0]!.input_items!.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('List the files.') });
        expect(records[1]!.input_items).toEqual([{ role: 'tool', tool_call_id: expect.any(String), content: expect.stringMatching(/a\.txt(\n|\\n)b\.txt/) }]); // Gemini's function response is JSON
        // Gemini's function calls carry no ids: its translation numbers them by position within each request.
        if (dialect !== 'gemini-generate') expect(records[1]!.input_items![0]!['tool_call_id']).toBe((records[0]!.output_items[0]!['tool_calls'] as Array<{ id: string }>)[0]!.id);

        const rollout = linkCalls(records, { unextended: 'split', broken: 'mask' });
        expect(rollout.masked).toBeNull();
        expect(rollout.sequences).toHaveLength(1);
        const seq = rollout.sequences[0]!;
        expect(seq.call_ids).toEqual(records.map((r) => r.model_call_id));
        expect(seq.token_ids).toEqual([...records[1]!.prompt_token_ids, ...records[1]!.generation_token_ids]);
        expect(seq.loss_mask.filter((m) => m === 1)).toHaveLength(records[0]!.generation_token_ids.length + records[1]!.generation_token_ids.length);
        expect(rollout.links[1]).toMatchObject({ parent_call_id: records[0]!.model_call_id, parent_resolution: 'resolved' });
        // The tool's output sits between the two generations with mask 0.
        const span = seq.spans[1]!;
        expect(span.generation_start - span.prompt_start).toBeGreaterThan(0);
        expect(seq.loss_mask.slice(span.prompt_start, span.generation_start).every((m) => m === 0)).toBe(true);
        // The usage reaches the scope as for any call.
        expect(scope.calls.map((c) => c.inputTokens)).toEqual(records.map((r) => r.prompt_token_ids.length));
      });
    }
  }
});

describe('training mode, lineage and policy', () => {
  it('a retried call and a rewritten history do not extend the sequence: split apart, or dropped by the setting', async () => {
    open();
    const first = await call('anthropic-messages', false, []);
    const history = [{ turn: first, results: ['a.txt'] }];
    await call('anthropic-messages', false, history);
    await call('anthropic-messages', false, history); // the same call again (a retry)
    await call('anthropic-messages', false, [], 'List the files, please.'); // the history rewritten
    const split = linkCalls(records, { unextended: 'split', broken: 'mask' });
    expect(split.sequences.map((s) => s.call_ids.length)).toEqual([2, 1, 1]);
    const dropped = linkCalls(records, { unextended: 'drop', broken: 'mask' });
    expect(dropped.sequences.map((s) => s.call_ids)).toEqual([[records[0]!.model_call_id, records[1]!.model_call_id]]);
    expect(dropped.dropped.map((d) => d.call_id)).toEqual([records[2]!.model_call_id, records[3]!.model_call_id]);
  });

  it('each call is stamped with the version that served it; drain holds new calls until resume', async () => {
    open();
    const first = await call('openai-chat', false, []);
    policy.drain();
    const before = engine.seen.length;
    let answered = false;
    const held = call('openai-chat', false, [{ turn: first, results: ['a.txt'] }]).then((t) => { answered = true; return t; });
    // The trainer swaps weights while the call waits at the gateway; the scope counts the held time as it goes.
    await new Promise((r) => setTimeout(r, 300));
    expect(engine.seen.length).toBe(before);
    expect(answered).toBe(false);
    expect(scope.heldMs()).toBeGreaterThanOrEqual(250);
    engine.version = 'w2';
    policy.set({ version: 2 });
    policy.resume();
    expect((await held).text).toBe('All done.');
    expect(records.map((r) => r.policy_version)).toEqual([1, 2]);
    expect(engine.seen.slice(-2).map((s) => s.version)).toEqual(['w1', 'w2']);
    expect(records[1]!.timing.held_ms).toBeGreaterThan(records[0]!.timing.held_ms);
    // Once answered, the held time stays what the call waited (the turn's budget moves on by that much, no more).
    const heldNow = scope.heldMs();
    expect(heldNow).toBeGreaterThanOrEqual(records[1]!.timing.held_ms - 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(scope.heldMs()).toBe(heldNow);
    // A version change does not break the lineage: the sequence carries both versions.
    expect(linkCalls(records).sequences[0]!.policy_versions).toEqual([1, 2]);
  });

  it('the endpoint the trainer sets is where the next call goes', async () => {
    open();
    const other = await new FakePolicy({ model: 'policy-13b', script }).start();
    try {
      policy.set({ version: 5, endpoint: { baseUrl: `${other.url}/v1`.replace(/\/v1$/, ''), model: 'policy-13b' } });
      await call('gemini-generate', false, []);
      expect(other.seen).toHaveLength(1);
      expect(records[0]).toMatchObject({ model: 'policy-13b', policy_version: 5 });
    } finally {
      await other.stop();
    }
  });

  it('an answer without token ids still reaches the agent, and its record says why it has no tokens', async () => {
    const old = await new FakePolicy({ model: 'policy-7b', tokenIds: false, script }).start();
    try {
      open();
      policy.set({ endpoint: { baseUrl: old.url, model: 'policy-7b' } });
      const turn = await call('openai-responses', true, []);
      expect(turn.calls).toHaveLength(1);
      expect(records[0]!.capture_error).toMatch(/no prompt_token_ids/);
      expect(linkCalls(records).masked).toMatch(/cannot be resolved: its tokens were not captured/);
    } finally {
      await old.stop();
    }
  });

  it('a request the gateway cannot translate is refused in the agent\'s dialect, and the engine is not called', async () => {
    open();
    const before = engine.seen.length;
    const res = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST', headers: headersOf('anthropic-messages', scope.token),
      body: JSON.stringify({ model: 'x', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', data: '' } }] }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/image block cannot be sent to a text policy/) } });
    expect(engine.seen.length).toBe(before);
  });
});

describe('probePolicyEndpoint', () => {
  it('accepts an engine that returns token ids and processed logprobs', async () => {
    expect(await probePolicyEndpoint(`${engine.url}/v1`, 'policy-7b')).toEqual({ ok: true });
  });

  it('refuses raw logprobs, naming the flag the server must be started with', async () => {
    const raw = await new FakePolicy({ model: 'policy-7b', logprobsMode: 'raw' }).start();
    try {
      const out = await probePolicyEndpoint(raw.url, 'policy-7b');
      expect(out.ok).toBe(false);
      expect(!out.ok && out.reason).toMatch(/returns raw logprobs .*--logprobs-mode processed_logprobs/);
    } finally {
      await raw.stop();
    }
  });

  it('refuses an engine without token ids, and an unknown model', async () => {
    const old = await new FakePolicy({ model: 'policy-7b', tokenIds: false }).start();
    try {
      const out = await probePolicyEndpoint(old.url, 'policy-7b');
      expect(!out.ok && out.reason).toMatch(/no prompt_token_ids.*return_token_ids/);
      const unknown = await probePolicyEndpoint(engine.url, 'nope');
      expect(!unknown.ok && unknown.reason).toMatch(/HTTP 404.*does not exist/);
    } finally {
      await old.stop();
    }
  });
});
