// A training scope's calls: whatever dialect the agent speaks goes to the policy endpoint as Chat Completions with
// token ids and logprobs asked for, comes back in the agent's dialect (streamed when it asked for a stream), and
// leaves a token record stamped with the policy version that served it. While the trainer drains, new calls wait
// here (the agent sees a slow answer, never an error) until it resumes.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  chatAnswerOf, chatRequestOf, cumulativeOf, DialectError, inputItemsOf, replyOf, tokenDigest, tokensOfChatAnswer, withCaptureFields,
  TOKEN_RECORD_SCHEMA_VERSION, type Dialect, type PolicyStateSource, type TokenRecord,
} from '../tokens/index.ts';
import type { CallRecord } from './usage.ts';

export interface TrainingScope {
  rolloutId: string;
  /** The agent turn (0-based), stamped on each record. */
  turn: number;
  policy: PolicyStateSource;
  /** Each call's record as it ends (the caller appends it to the turn's token-records.jsonl). */
  onRecord: (r: TokenRecord) => void;
}

/** Told when a call starts and stops waiting for a drain's end (the scope counts the time held). */
export interface HoldWatch {
  holdBegins(): void;
  holdEnds(): void;
}

export interface TrainingCall {
  dialect: Dialect;
  path: string;
  body: Buffer;
  /** Gemini's streamGenerateContent (the stream is in the path) and its alt=sse. */
  pathStream: boolean;
  sse: boolean;
}

/** Sends a JSON body to a URL, with the gateway's retries; answers status and text. */
export type PolicySend = (target: URL, headers: Record<string, string>, body: Buffer) => Promise<{ status: number; text: string; attempts: number }>;

type Fail = (status: number, type: string, message: string) => void;

let counter = 0;
const callId = (turn: number): string => `t${turn}-${++counter}-${randomBytes(4).toString('hex')}`;
const ms = (from: number): number => Math.round((performance.now() - from) * 100) / 100;

/** Answers one call of a training scope; returns the usage record (null when nothing reached the engine). */
export async function trainingCall(
  training: TrainingScope, call: TrainingCall, req: IncomingMessage, res: ServerResponse, send: PolicySend, fail: Fail,
  env: Readonly<Record<string, string | undefined>> = process.env, hold?: HoldWatch,
): Promise<Omit<CallRecord, 'costUsd'> | null> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  let request: Record<string, unknown>;
  let chat;
  try {
    request = JSON.parse(call.body.toString('utf8')) as Record<string, unknown>;
    chat = chatRequestOf(call.dialect, request);
  } catch (err) {
    fail(400, 'invalid_request_error', `berth gateway (training mode): ${err instanceof DialectError ? err.message : `the request is not JSON: ${(err as Error).message}`}`);
    return null;
  }
  const gone = new AbortController();
  res.once('close', () => { if (!res.writableFinished) gone.abort(new Error('the agent went away')); });
  let state;
  hold?.holdBegins();
  try {
    state = await training.policy.whenOpen(gone.signal);
  } catch {
    return null;
  } finally {
    hold?.holdEnds();
  }
  const held = ms(started);
  const sentAt = performance.now();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const key = state.endpoint.apiKeyVar ? env[state.endpoint.apiKeyVar] : undefined;
  if (key) headers['authorization'] = `Bearer ${key}`;
  const target = new URL(`${state.endpoint.baseUrl.replace(/\/+$/, '')}/v1/chat/completions`);
  const answer = await send(target, headers, Buffer.from(JSON.stringify(withCaptureFields(chat as unknown as Record<string, unknown>, state.endpoint.model, state.sampling))));
  const engineMs = ms(sentAt);
  const base = { heldMs: held, at: startedAt, protocol: call.dialect, model: state.endpoint.model, status: answer.status, attempts: answer.attempts, stream: call.pathStream || request['stream'] === true };
  if (answer.status >= 400) {
    fail(answer.status, 'api_error', `berth gateway: the policy endpoint ${target.origin} answered HTTP ${answer.status}: ${answer.text.slice(0, 400)}`);
    return { ...base, latencyMs: ms(started), inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  }
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    fail(502, 'api_error', `berth gateway: the policy endpoint ${target.origin} answered something that is not JSON`);
    return { ...base, status: 502, latencyMs: ms(started), inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  }
  const tokens = tokensOfChatAnswer(json);
  const a = chatAnswerOf(json, state.endpoint.model);
  const reply = replyOf(call.dialect, a, { stream: base.stream, sse: call.sse, request });
  res.writeHead(200, { 'content-type': reply.contentType });
  res.end(reply.body);
  const captured = 'error' in tokens ? { prompt: [], generation: [], logprobs: [] } : tokens;
  const message = { type: 'message', role: 'assistant', content: a.content, ...(a.toolCalls.length ? { tool_calls: a.toolCalls } : {}) };
  training.onRecord({
    schema_version: TOKEN_RECORD_SCHEMA_VERSION, rollout_id: training.rolloutId, model_call_id: callId(training.turn), model: state.endpoint.model,
    prompt_token_ids: captured.prompt, generation_token_ids: captured.generation, generation_log_probs: captured.logprobs,
    output_items: [message], input_items: inputItemsOf(chat.messages), token_item_index: 0, response_id: a.id, created_at: Date.now() / 1000,
    parent_call_id: null, parent_resolution: null,
    cum_len: captured.prompt.length + captured.generation.length, digest: tokenDigest(cumulativeOf({ prompt_token_ids: captured.prompt, generation_token_ids: captured.generation })),
    policy_version: state.version, policy_version_end: training.policy.current().version,
    finish_reason: a.finishReason, dialect: call.dialect, stream: base.stream,
    timing: { started_at: startedAt, held_ms: held, engine_ms: engineMs, total_ms: ms(started) },
    turn: training.turn, capture_error: 'error' in tokens ? tokens.error : null,
  });
  return { ...base, latencyMs: ms(started), inputTokens: a.promptTokens, cachedInputTokens: 0, outputTokens: a.completionTokens };
}
