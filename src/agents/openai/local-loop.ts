// The openai agent as a plain in-process loop: call the model, run its bash calls, repeat until it answers
// without a tool call, the per-turn call limit is hit, or the turn's budget is spent. Every step goes
// through the conversation file, so this is also the reference for the durable (activity-per-step) version.
import { join } from 'node:path';
import { AgentConfigError } from '../errors.ts';
import { secondsSince, writeTrajectory } from '../logs.ts';
import type { AgentHarness, AgentTurnContext, AgentTurnResult } from '../types.ts';
import { runBashTool } from './bash-tool.ts';
import { callModel, DEFAULT_API_KEY_ENV } from './call-model.ts';
import { startConversation } from './conversation.ts';
import { DEFAULT_MAX_CALLS } from './limits.ts';
import { nextAction } from './next-action.ts';
import type { RetryOptions } from './retry.ts';
import { openaiTrajectory } from './trajectory.ts';

export interface OpenAiTurnOptions {
  baseUrl: string;
  model: string;
  /** Name of the variable holding the API key (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  maxCalls?: number;
  maxTokens?: number;
  /** More request fields, e.g. { temperature: 0 }. */
  extraBody?: Record<string, unknown>;
  /** Default: defaultSystemPrompt(workdir). */
  systemPrompt?: string;
  /** Default: <logsDir>/conversation.jsonl. */
  conversationPath?: string;
  /** Longest a single bash call may run (also bounded by what is left of the turn). Default 600. */
  toolTimeoutSec?: number;
  toolOutputCapBytes?: number;
  retry?: RetryOptions;
}

export function defaultSystemPrompt(workdir: string): string {
  return (
    `You are an autonomous agent working in a Linux sandbox. Your working directory is ${workdir}. ` +
    'Use the bash tool to inspect and change files and to run programs. When the task is done, reply with your ' +
    'final answer as plain text, without calling a tool.'
  );
}

export const CONVERSATION_FILE = 'conversation.jsonl';
const HEARTBEAT_MS = 10_000;

/** Heartbeats while a long call (a model request, a bash command) is in flight. */
async function beating<T>(ctx: AgentTurnContext, details: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  ctx.heartbeat(details);
  const timer = setInterval(() => ctx.heartbeat(details), HEARTBEAT_MS);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

export async function runOpenAiTurnLocally(ctx: AgentTurnContext, opts: OpenAiTurnOptions): Promise<AgentTurnResult> {
  const started = Date.now();
  const deadline = started + ctx.timeoutSec * 1000;
  const path = opts.conversationPath ?? join(ctx.logsDir, CONVERSATION_FILE);
  const maxCalls = opts.maxCalls ?? DEFAULT_MAX_CALLS;
  await startConversation(path, { system: opts.systemPrompt ?? defaultSystemPrompt(ctx.workdir), instruction: ctx.instruction });

  let timedOut = false;
  let callLimitReached = false;
  let modelSec = 0;
  let toolSec = 0;
  turn: for (;;) {
    const next = await nextAction(path, maxCalls);
    if (next.kind === 'run_tools') {
      for (const call of next.calls) {
        const leftSec = (deadline - Date.now()) / 1000;
        if (leftSec < 1) {
          timedOut = true;
          break turn;
        }
        const t1 = Date.now();
        await beating(ctx, { phase: 'tool', call: call.id }, () =>
          runBashTool({
            provider: ctx.provider,
            handle: ctx.handle,
            user: ctx.user,
            workdir: ctx.workdir,
            env: ctx.env,
            call,
            timeoutSec: Math.min(opts.toolTimeoutSec ?? 600, leftSec),
            conversationPath: path,
            outputCapBytes: opts.toolOutputCapBytes,
          }),
        );
        toolSec += (Date.now() - t1) / 1000;
      }
      continue;
    }
    if (next.kind === 'done') {
      callLimitReached = next.reason === 'call_limit';
      break;
    }
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) {
      timedOut = true;
      break;
    }
    const t0 = Date.now();
    try {
      const budget = AbortSignal.timeout(remainingMs);
      await beating(ctx, { phase: 'model', call: next.callNumber }, () =>
        callModel({
          conversationPath: path,
          baseUrl: opts.baseUrl,
          model: opts.model,
          apiKeyEnv: opts.apiKeyEnv ?? DEFAULT_API_KEY_ENV,
          maxTokens: opts.maxTokens,
          extraBody: opts.extraBody,
          retry: opts.retry,
          signal: ctx.signal ? AbortSignal.any([ctx.signal, budget]) : budget,
          onRetry: (info) => ctx.heartbeat({ phase: 'model-retry', ...info }),
        }),
      );
    } catch (err) {
      if (!ctx.signal?.aborted && Date.now() >= deadline - 50) {
        timedOut = true;
        break;
      }
      throw err;
    } finally {
      modelSec += (Date.now() - t0) / 1000;
    }
  }

  const { trajectory, finalText, usage } = await openaiTrajectory(path, { sessionId: ctx.runKey, modelName: opts.model });
  await writeTrajectory(ctx, trajectory);
  return {
    responseText: finalText,
    exitCode: null,
    timedOut,
    trajectory,
    timings: { agent: secondsSince(started), model: Math.round(modelSec * 100) / 100, tools: Math.round(toolSec * 100) / 100 },
    usage,
    ...(callLimitReached ? { callLimitReached: true } : {}),
  };
}

function positiveInt(args: Record<string, string>, key: string): number | undefined {
  const v = args[key];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new AgentConfigError(`--agent-arg ${key}=${v}: must be a whole number of at least 1`);
  return n;
}

function temperatureOf(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new AgentConfigError(`--agent-arg temperature=${v}: must be a number of at least 0`);
  return n;
}

/**
 * Options from --agent-arg: base_url (else $OPENAI_BASE_URL), model (else $OPENAI_MODEL), api_key_env,
 * max_calls, max_tokens, tool_timeout_sec, system_prompt, temperature.
 */
export function openAiOptionsFromArgs(args: Record<string, string>, env: Readonly<Record<string, string | undefined>> = process.env): OpenAiTurnOptions {
  const baseUrl = args['base_url'] ?? env['OPENAI_BASE_URL'];
  const model = args['model'] ?? env['OPENAI_MODEL'];
  if (!baseUrl) throw new AgentConfigError('the openai agent needs an endpoint: pass --agent-arg base_url=http://host:port/v1 or set OPENAI_BASE_URL on the worker');
  if (!model) throw new AgentConfigError('the openai agent needs a model: pass --agent-arg model=<name> or set OPENAI_MODEL on the worker');
  return {
    baseUrl,
    model,
    apiKeyEnv: args['api_key_env'],
    maxCalls: positiveInt(args, 'max_calls'),
    maxTokens: positiveInt(args, 'max_tokens'),
    toolTimeoutSec: positiveInt(args, 'tool_timeout_sec'),
    systemPrompt: args['system_prompt'],
    ...(args['temperature'] !== undefined ? { extraBody: { temperature: temperatureOf(args['temperature']) } } : {}),
  };
}

export const openaiHarness: AgentHarness = {
  name: 'openai',
  runTurn: (ctx) => runOpenAiTurnLocally(ctx, openAiOptionsFromArgs(ctx.args)),
};
