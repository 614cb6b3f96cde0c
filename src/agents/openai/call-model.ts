// One model call against an OpenAI-compatible Chat Completions endpoint: sends the conversation file's
// messages with the bash tool, appends the assistant's message to the file, and returns its tool calls.
//
// Idempotent for a durable caller: when the file already ends with an assistant message (an earlier attempt
// got its answer but did not report back), that message is returned and nothing is sent.
// The API key is read from the environment variable the caller names; it goes into the Authorization header
// only, and is scrubbed from anything written or thrown.
import { AgentConfigError } from '../errors.ts';
import { BASH_TOOL } from './bash-tool.ts';
import { appendRecord, messagesOf, readConversation } from './conversation.ts';
import { ContextLengthExceeded, ModelCallFailed, ModelRequestRejected } from './errors.ts';
import { isTransientModelStatus, MODEL_RETRY, parseRetryAfter, retriesAfter, retryDelayMs } from '../../outcomes/index.ts';
import { wait, type RetryOptions } from './retry.ts';
import { toolCallsOf } from './tool-calls.ts';
import type { ChatMessage, ChatToolCall, ConversationRecord, GatewayCallNote, ModelUsage, ToolCall } from './types.ts';

export const DEFAULT_API_KEY_ENV = 'OPENAI_API_KEY';

export interface CallModelOptions {
  conversationPath: string;
  /** E.g. http://127.0.0.1:8000/v1; `/chat/completions` is appended. */
  baseUrl: string;
  model: string;
  /** NAME of the environment variable holding the key (default OPENAI_API_KEY); unset or empty sends no key. */
  apiKeyEnv?: string;
  /** Same as apiKeyEnv: the variable's name, never the key itself. */
  apiKey?: string;
  /** A gateway token sent in place of a key (the gateway holds the key); wins over apiKeyEnv. */
  token?: string;
  maxTokens?: number;
  /** More request fields (temperature, top_p, seed...); cannot replace model, messages or tools. */
  extraBody?: Record<string, unknown>;
  /** Function tools offered beside bash (the task's MCP servers' tools). */
  extraTools?: readonly Record<string, unknown>[];
  signal?: AbortSignal;
  retry?: RetryOptions;
  /** Per HTTP request; default 600 s. */
  requestTimeoutMs?: number;
  /**
   * What the gateway counted for the answer, asked for just before the answer is written so the two go in one
   * record (a durable turn resumed after a crash counts each call once).
   */
  gatewayNote?: () => GatewayCallNote | undefined;
  /** Called before each wait between attempts (heartbeats, logs). */
  onRetry?: (info: { attempt: number; status: number | null; waitMs: number }) => void;
}

export interface CallModelResult {
  toolCalls: ToolCall[];
  /** The assistant's text when it called no tool (its final answer). */
  finalText?: string;
  usage: ModelUsage;
  finishReason: string;
  /** True when the answer was already in the file and no request was sent. */
  replayed: boolean;
  attempts: number;
}

interface RawChoice {
  message?: { content?: unknown; tool_calls?: unknown; reasoning_content?: unknown };
  finish_reason?: unknown;
}

const CONTEXT_TEXT = /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long|maximum (input|prompt) length/i;

function redactor(secret: string | undefined): (text: string) => string {
  if (!secret) return (t) => t;
  return (t) => t.split(secret).join('[REDACTED]');
}

/** The assistant message as stored: tool calls with ids (made up when the server sent none) and string arguments. */
function normaliseAssistant(raw: RawChoice['message'], callNumber: number): Extract<ChatMessage, { role: 'assistant' }> {
  const content = typeof raw?.content === 'string' ? raw.content : null;
  const rawCalls = Array.isArray(raw?.tool_calls) ? (raw.tool_calls as Array<Record<string, unknown>>) : [];
  const calls: ChatToolCall[] = rawCalls.map((c, i) => {
    const fn = (c['function'] ?? {}) as { name?: unknown; arguments?: unknown };
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    const id = typeof c['id'] === 'string' && c['id'] !== '' ? c['id'] : `call_${callNumber}_${i + 1}`;
    return { id, type: 'function', function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: args } };
  });
  return calls.length > 0 ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content };
}

function resultOf(record: ConversationRecord, replayed: boolean, attempts: number): CallModelResult {
  const message = record.message as Extract<ChatMessage, { role: 'assistant' }>;
  const toolCalls = toolCallsOf(message);
  return {
    toolCalls,
    ...(toolCalls.length === 0 ? { finalText: message.content ?? '' } : {}),
    usage: record.usage ?? { promptTokens: 0, completionTokens: 0 },
    finishReason: record.finish_reason ?? 'unknown',
    replayed,
    attempts,
  };
}

function errorText(body: string): { code?: string; message: string } {
  try {
    const j = JSON.parse(body) as { error?: { code?: unknown; message?: unknown; type?: unknown } | string; message?: unknown };
    if (typeof j.error === 'string') return { message: j.error };
    const code = typeof j.error?.code === 'string' ? j.error.code : typeof j.error?.type === 'string' ? j.error.type : undefined;
    const message = typeof j.error?.message === 'string' ? j.error.message : typeof j.message === 'string' ? j.message : body;
    return { code, message };
  } catch {
    return { message: body };
  }
}

function isContextLength(status: number, body: string): boolean {
  if (status !== 400 && status !== 413 && status !== 422) return false;
  const { code, message } = errorText(body);
  return code === 'context_length_exceeded' || CONTEXT_TEXT.test(message);
}

export async function callModel(opts: CallModelOptions): Promise<CallModelResult> {
  const records = await readConversation(opts.conversationPath);
  if (records.length === 0) {
    throw new Error(`${opts.conversationPath} holds no conversation: start it with startConversation before calling the model`);
  }
  const last = records[records.length - 1]!;
  if (last.message.role === 'assistant') return resultOf(last, true, 0);

  const keyEnv = apiKeyEnvOf(opts);
  const key = opts.token ?? (process.env[keyEnv] || undefined);
  const redact = redactor(key);
  const retry = { ...MODEL_RETRY, ...opts.retry };
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const body = JSON.stringify({
    ...opts.extraBody,
    model: opts.model,
    messages: messagesOf(records),
    tools: [BASH_TOOL, ...(opts.extraTools ?? [])],
    tool_choice: 'auto',
    ...(opts.maxTokens !== undefined ? { max_tokens: opts.maxTokens } : {}),
  });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (key) headers['authorization'] = `Bearer ${key}`;
  const callNumber = records.filter((r) => r.message.role === 'assistant').length + 1;

  let lastProblem = '';
  let lastStatus: number | null = null;
  for (let attempt = 1; attempt <= retry.maxAttempts; attempt++) {
    opts.signal?.throwIfAborted();
    let retryAfter: number | null = null;
    try {
      const timeout = AbortSignal.timeout(opts.requestTimeoutMs ?? 600_000);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
      const res = await fetch(url, { method: 'POST', headers, body, signal });
      const text = await res.text();
      lastStatus = res.status;
      if (res.ok) {
        const parsed = parseCompletion(text);
        if (parsed) {
          const gateway = opts.gatewayNote?.();
          const record = await appendRecord(opts.conversationPath, JSON.parse(redact(JSON.stringify({
            message: normaliseAssistant(parsed.choice.message, callNumber),
            usage: parsed.usage,
            finish_reason: parsed.finishReason,
            ...(parsed.model ? { model: parsed.model } : {}),
            ...(parsed.reasoning ? { reasoning: parsed.reasoning } : {}),
            ...(gateway ? { gateway } : {}),
          }))) as Omit<ConversationRecord, 'at'>);
          return resultOf(record, false, attempt);
        }
        lastProblem = `the endpoint answered 200 without a chat completion (no choices[0].message): ${redact(text.slice(0, 300))}`;
      } else if (isContextLength(res.status, text)) {
        const { message } = errorText(text);
        throw new ContextLengthExceeded(
          `the conversation (${records.length} messages, ${body.length} bytes of request) no longer fits model ${opts.model}'s ` +
            `context window: the endpoint answered ${res.status}: ${redact(message).slice(0, 500)}. ` +
            `End the turn here, or use a model with a longer context (e.g. a larger --max-model-len on vLLM)` +
            (opts.maxTokens !== undefined ? ` or a smaller max_tokens (now ${opts.maxTokens})` : ''),
          res.status,
        );
      } else if (isTransientModelStatus(res.status)) {
        retryAfter = parseRetryAfter(res.headers.get('retry-after'));
        lastProblem = `HTTP ${res.status}: ${redact(errorText(text).message).slice(0, 300)}`;
      } else {
        throw new ModelRequestRejected(
          `${url} refused the request with HTTP ${res.status}: ${redact(errorText(text).message).slice(0, 500)}. ` +
            `Check the model name (${opts.model}), the base URL and the key in $${keyEnv}.`,
          res.status,
        );
      }
    } catch (err) {
      if (err instanceof ContextLengthExceeded || err instanceof ModelRequestRejected) throw err;
      if (opts.signal?.aborted) throw err;
      lastStatus = null;
      lastProblem = `request failed: ${redact(err instanceof Error ? `${err.message}${causeOf(err)}` : String(err))}`;
    }
    // A 200 without a completion is retried as if there had been no answer.
    if (retriesAfter(attempt, lastStatus === 200 ? null : lastStatus, retry)) {
      const waitMs = retryDelayMs(attempt, retryAfter, retry);
      opts.onRetry?.({ attempt, status: lastStatus, waitMs });
      await wait(waitMs, opts.signal);
    }
  }
  throw new ModelCallFailed(
    `${url} did not answer after ${retry.maxAttempts} attempts; last: ${lastProblem}. ` +
      `Check that the endpoint is up and not rate-limiting this key, then retry the turn.`,
    retry.maxAttempts,
    lastStatus,
  );
}

/** The variable name in use; a value that is not a variable name (a key passed by mistake) is refused unseen. */
export function apiKeyEnvOf(opts: { apiKeyEnv?: string; apiKey?: string }): string {
  const name = opts.apiKeyEnv ?? opts.apiKey ?? DEFAULT_API_KEY_ENV;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new AgentConfigError(
      'apiKeyEnv must name the environment variable that holds the API key (e.g. OPENAI_API_KEY), not the key itself',
    );
  }
  return name;
}

function causeOf(err: Error): string {
  const c = (err as { cause?: unknown }).cause;
  return c instanceof Error ? ` (${c.message})` : '';
}

function parseCompletion(text: string): { choice: RawChoice; usage: ModelUsage; finishReason: string; model?: string; reasoning?: string } | null {
  let j: { choices?: RawChoice[]; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown }; model?: unknown };
  try {
    j = JSON.parse(text) as typeof j;
  } catch {
    return null;
  }
  const choice = j.choices?.[0];
  if (!choice || typeof choice.message !== 'object' || choice.message === null) return null;
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
  const reasoning = typeof choice.message.reasoning_content === 'string' ? choice.message.reasoning_content : undefined;
  return {
    choice,
    usage: { promptTokens: num(j.usage?.prompt_tokens), completionTokens: num(j.usage?.completion_tokens) },
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : 'unknown',
    ...(typeof j.model === 'string' ? { model: j.model } : {}),
    ...(reasoning ? { reasoning } : {}),
  };
}
