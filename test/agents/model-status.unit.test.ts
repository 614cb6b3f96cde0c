// A model endpoint's HTTP 4xx is a setting that is wrong: it is not retried (neither by the openai harness's call
// loop nor by the model gateway in front of it), and the activity turns it into the masking failure kind of
// src/outcomes; 429, 408 and 5xx are transient and retried. The model API is a real HTTP server in the test.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callModel, ModelRequestRejected, startConversation } from '../../src/agents/index.ts';
import { asActivityFailure } from '../../src/activities/failures.ts';
import { ModelGateway } from '../../src/gateway/index.ts';
import { FAILURE_KINDS } from '../../src/outcomes/index.ts';
import { finalMessage, startScriptedServer, type Reply } from './scripted-openai.ts';

let gateway: ModelGateway;
beforeAll(async () => {
  gateway = new ModelGateway({ host: '127.0.0.1', retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 3 } });
  await gateway.start();
});
afterAll(() => gateway.stop());

const refusal = (status: number): Reply => ({ status, body: { error: { message: `refused with ${status}`, type: 'invalid_request_error', code: null } } });

/** One model call through the gateway, as the openai activity makes it; the upstream answers `first`, then a final message. */
async function callThroughGateway(first: Reply) {
  const upstream = await startScriptedServer((n) => (n === 0 ? first : finalMessage('done')));
  const scope = gateway.register({ label: 'test', upstreams: { openai: { provider: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-upstream' } }, prices: {} });
  const conversationPath = join(mkdtempSync(join(tmpdir(), 'berth-model-status-')), 'conversation.jsonl');
  await startConversation(conversationPath, { instruction: 'hi' });
  try {
    const result = await callModel({ conversationPath, baseUrl: `${gateway.url}/v1`, model: 'm', token: scope.token, retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 3 } })
      .then((r) => ({ ok: true as const, r }), (err: unknown) => ({ ok: false as const, err }));
    return { result, requests: upstream.requests.length };
  } finally {
    gateway.revoke(scope.token);
    await upstream.close();
  }
}

describe('model HTTP statuses (src/outcomes/model-status.ts)', () => {
  it.each([
    [400, 'agent:model_rejected'],
    [401, 'agent:bad_credentials'],
    [403, 'agent:bad_credentials'],
    [404, 'agent:unknown_model'],
    [422, 'agent:model_rejected'],
  ] as const)('HTTP %i is asked once and masks the episode as %s, final for Temporal', async (status, kind) => {
    const { result, requests } = await callThroughGateway(refusal(status));
    expect(requests).toBe(1);
    expect(result.ok).toBe(false);
    const err = (result as { err: unknown }).err;
    expect(err).toBeInstanceOf(ModelRequestRejected);
    const failure = asActivityFailure(err) as ApplicationFailure;
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({ type: kind, nonRetryable: true });
    expect(FAILURE_KINDS[kind].masked).toBe(true);
  });

  it.each([429, 408, 500, 502, 503, 529])('HTTP %i is retried and the call then succeeds', async (status) => {
    const { result, requests } = await callThroughGateway(refusal(status));
    expect(result.ok).toBe(true);
    expect(requests).toBe(2);
  });
});
