import { ApplicationFailure, Context, heartbeat } from '@temporalio/activity';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CONVERSATION_FILE, ContextLengthExceeded, DEFAULT_API_KEY_ENV, callModel, defaultSystemPrompt, lastAssistant, openAiOptionsFromArgs, openaiTrajectory,
  mcpFunctionTools, readConversation, runBashTool, runMcpTool, startConversation, toolCallsOf,
} from '../agents/index.ts';
import { clearTurnFiles, redact } from '../verify/index.ts';
import type { ModelLimits, OpenAiModelAnswer, OpenAiTurnSetup, TurnRef } from './types.ts';
import type { GatewayCallNote, ToolCall } from '../agents/index.ts';
import { upstreamFor } from '../gateway/index.ts';
import { loadBerthConfig } from '../config/berth-config.ts';
import { asActivityFailure, typed } from './failures.ts';
import { handleOf, phaseTargets } from '../host/handle.ts';
import { turnDirOf } from '../host/logs.ts';
import { enterPhase } from '../host/phase-network.ts';
import type { HostServices } from '../host/deps.ts';
import { beating } from './beating.ts';
import { mcpToolsFor, stdioStarter } from '../host/mcp-tools.ts';
import { agentUserFor } from './turn.ts';
import { hiddenValuesOf } from '../host/hidden.ts';
import { trainingScopeFor } from './training.ts';

const agentDir = (ref: TurnRef) => join(turnDirOf(ref), 'agent');

/** Host queue: clears the previous turn's files, switches the agent user, and opens the conversation file. */
export async function openaiStart(deps: HostServices, ref: TurnRef): Promise<OpenAiTurnSetup> {
  return typed(async () => {
    const task = await deps.loadEpisodeTask(ref.input);
    const training = ref.input.training;
    // In training mode the policy is the trainer's: its endpoint and model unless --agent-arg names them.
    const opts = openAiOptionsFromArgs(training ? { base_url: training.endpoint, model: training.model, ...ref.input.agentArgs } : ref.input.agentArgs);
    const { provider } = deps;
    const handle = handleOf(ref.sandbox);
    if (ref.turn > 0) await clearTurnFiles(provider, handle, task.verifier.inputs);
    const user = await agentUserFor(provider, task, ref);
    await enterPhase(deps, task, phaseTargets(ref.sandbox), ref.turn, 'agent', ref.input.agent);
    const dir = agentDir(ref);
    mkdirSync(dir, { recursive: true });
    const conversationPath = join(dir, CONVERSATION_FILE);
    const instruction = task.multi_step ? task.steps[ref.turn]!.instruction : task.instruction ?? '';
    await startConversation(conversationPath, { system: opts.systemPrompt ?? defaultSystemPrompt(handle.workdir), instruction });
    const toolTimeoutSec = opts.toolTimeoutSec ?? 600;
    const mcp = task.environment.mcp_servers.length > 0
      ? await mcpToolsFor(provider, task, ref.sandbox, stdioStarter(provider, ref.sandbox, user, toolTimeoutSec), Context.current().cancellationSignal)
      : null;
    if (mcp && mcp.notes.length > 0) writeFileSync(join(dir, 'mcp.txt'), `${mcp.notes.join('\n')}\n`);
    return {
      ...(mcp && mcp.tools.length > 0 ? { mcpTools: mcp.tools } : {}),
      conversationPath, user, workdir: handle.workdir, baseUrl: opts.baseUrl, model: opts.model,
      apiKeyEnv: opts.apiKeyEnv ?? null, maxCalls: opts.maxCalls ?? 50, maxTokens: opts.maxTokens ?? null,
      toolTimeoutSec,
      ...(training ? { training: { spec: training, episodeDir: ref.sandbox.logsDir, turn: ref.turn, rolloutId: episodeWorkflowId() } } : {}),
    };
  });
}

/** The episode's workflow id (an openai turn runs in a child workflow named `<episode>/turn-N`). */
const episodeWorkflowId = (): string => (Context.current().info.workflowExecution?.workflowId ?? 'local').replace(/\/turn-\d+$/, '');

/**
 * Shared queue: one model call, through this worker's gateway (which adds the key and counts the call). Its answer
 * goes to the conversation file; history keeps only the ids of the tool calls to run and the usage. 429 and 5xx are
 * retried with backoff. `spentTokens`/`spentCostUsd` are what the turn used before: passing --max-tokens or
 * --max-cost is reported as `limit`.
 */
export async function openaiModelCall(deps: HostServices, s: OpenAiTurnSetup, spent?: { tokens: number; costUsd: number; limits?: ModelLimits }): Promise<OpenAiModelAnswer> {
  try {
    return await modelCallThroughGateway(deps, s, spent, { noteInRecord: false });
  } catch (err) {
    if (err instanceof ContextLengthExceeded) throw ApplicationFailure.nonRetryable(err.message, 'berth:context_length');
    throw asActivityFailure(err);
  }
}

type GatewayCounts = Pick<OpenAiModelAnswer, 'heldMs' | 'cachedTokens' | 'costUsd' | 'limit'>;

/** The counts as the conversation file keeps them beside the answer (src/agents/openai/turn-step.ts reads them back). */
export function gatewayNoteOf(c: GatewayCounts): GatewayCallNote | undefined {
  const note: GatewayCallNote = {
    ...(c.cachedTokens !== undefined ? { cached_tokens: c.cachedTokens } : {}), ...(c.costUsd !== undefined ? { cost_usd: c.costUsd } : {}),
    ...(c.heldMs !== undefined ? { held_ms: c.heldMs } : {}), ...(c.limit ? { limit: c.limit } : {}),
  };
  return Object.keys(note).length > 0 ? note : undefined;
}

/**
 * One model call through this worker's gateway, under a scope of its own. `noteInRecord`: what the gateway counted
 * (cached tokens, cost, held time, a limit passed) goes into the answer's record in the conversation file too.
 */
export async function modelCallThroughGateway(
  deps: HostServices, s: OpenAiTurnSetup, spent: { tokens: number; costUsd: number; limits?: ModelLimits } | undefined, opts: { noteInRecord: boolean },
): Promise<OpenAiModelAnswer> {
  const gateway = await deps.gateway.get();
  const scope = gateway.register({
    label: 'openai',
    upstreams: s.training ? {} : { openai: upstreamFor('openai', process.env, loadBerthConfig().config.secrets, { baseUrl: s.baseUrl, keyVar: s.apiKeyEnv ?? DEFAULT_API_KEY_ENV }) },
    ...(s.training ? { training: trainingScopeFor(s.training.spec, s.training.episodeDir, s.training.turn, s.training.rolloutId) } : {}),
    prices: loadBerthConfig().config.gateway.prices,
    limits: spent?.limits ?? {},
    spentBefore: { tokens: spent?.tokens ?? 0, costUsd: spent?.costUsd ?? 0 },
  });
  // The gateway has recorded the call by the time its answer reaches callModel (it records before the response's
  // bytes can be read back in this process).
  const counted = (): GatewayCounts => {
    const call = scope.calls.at(-1);
    const heldMs = Math.round(scope.calls.reduce((sum, c) => sum + (c.heldMs ?? 0), 0));
    return {
      ...(heldMs > 0 ? { heldMs } : {}),
      ...(call ? { cachedTokens: call.cachedInputTokens } : {}), ...(call?.costUsd != null ? { costUsd: call.costUsd } : {}),
      ...(scope.stopped ? { limit: { kind: `agent:${scope.stopped.kind}`, reason: scope.stopped.reason } } : {}),
    };
  };
  try {
    // Heartbeats while the call runs: an answer may take minutes (a long generation, or a call held at the gateway
    // while the trainer drains), and without them the call's heartbeat timeout would start it again.
    const r = await beating(() => callModel({
      conversationPath: s.conversationPath, baseUrl: `${gateway.url}/v1`, model: s.model, token: scope.token,
      maxTokens: s.maxTokens ?? undefined, signal: Context.current().cancellationSignal, onRetry: (info) => heartbeat(info),
      ...(s.mcpTools ? { extraTools: mcpFunctionTools(s.mcpTools) } : {}),
      ...(opts.noteInRecord ? { gatewayNote: () => gatewayNoteOf(counted()) } : {}),
    }));
    return { toolCallIds: r.toolCalls.map((t) => t.id), promptTokens: r.usage.promptTokens ?? 0, completionTokens: r.usage.completionTokens ?? 0, ...counted() };
  } finally {
    gateway.revoke(scope.token);
    scope.opts.training?.policy.release();
  }
}

/** Host queue: one bash tool call in the sandbox, as the agent user; idempotent by tool call id. */
export async function openaiToolCall(deps: HostServices, req: { ref: TurnRef; setup: OpenAiTurnSetup; toolCallId: string; timeoutSec: number }): Promise<{ exitCode: number | null }> {
  return typed(() => beating(async () => {
    const records = await readConversation(req.setup.conversationPath);
    const assistant = lastAssistant(records);
    const call = assistant ? toolCallsOf(assistant.message).find((c) => c.id === req.toolCallId) : undefined;
    if (!call) throw ApplicationFailure.nonRetryable(`tool call ${req.toolCallId} is not in ${req.setup.conversationPath}`, 'berth:conversation_lost');
    // Each call is the agent phase: a worker restarted since the turn started puts the sandbox back on its network
    // (a stdio MCP server runs there too).
    await enterPhase(deps, await deps.loadEpisodeTask(req.ref.input), phaseTargets(req.ref.sandbox), req.ref.turn, 'agent', req.ref.input.agent);
    return runToolCall(deps, req.ref, req.setup, call, req.timeoutSec);
  }));
}

/** Runs one of the model's tool calls (an MCP tool's, else bash in the sandbox) and appends its output to the conversation. */
export async function runToolCall(deps: HostServices, ref: TurnRef, setup: OpenAiTurnSetup, call: ToolCall, timeoutSec: number): Promise<{ exitCode: number | null }> {
  const mcp = setup.mcpTools?.find((t) => t.name === call.name);
  if (mcp) {
    // The stdio server's process may live a little past the call's budget: its answer is bounded by the budget.
    const startStdio = stdioStarter(deps.provider, ref.sandbox, setup.user, timeoutSec + 30);
    await runMcpTool(mcp, call, setup.conversationPath, { startStdio, timeoutSec, signal: Context.current().cancellationSignal });
    return { exitCode: null };
  }
  const r = await runBashTool({
    provider: deps.provider, handle: { ...handleOf(ref.sandbox), user: setup.user }, user: setup.user,
    workdir: setup.workdir, env: {}, call, timeoutSec, conversationPath: setup.conversationPath,
  });
  return { exitCode: r.exitCode };
}

/** Host queue: the turn's ATIF transcript and final text, from the conversation file (redacted as every agent's is). */
export async function openaiFinish(deps: HostServices, req: { ref: TurnRef; setup: OpenAiTurnSetup; stopReason: string | null }): Promise<{ responseText: string }> {
  return typed(() => writeTurnTranscript(deps, req.ref, req.setup, req.stopReason));
}

export async function writeTurnTranscript(deps: HostServices, ref: TurnRef, setup: OpenAiTurnSetup, stopReason: string | null): Promise<{ responseText: string }> {
  const { runId } = Context.current().info.workflowExecution ?? { runId: 'local' };
  const { trajectory, finalText: clear } = await openaiTrajectory(setup.conversationPath, { sessionId: `${runId}-t${ref.turn + 1}`, modelName: setup.model });
  const hidden = hiddenValuesOf(await deps.loadEpisodeTask(ref.input));
  const finalText = redact(clear, hidden);
  const dir = agentDir(ref);
  writeFileSync(join(dir, 'trajectory.json'), redact(JSON.stringify(trajectory, null, 2), hidden));
  writeFileSync(join(dir, 'response.txt'), finalText);
  if (stopReason) writeFileSync(join(dir, 'stop-reason.txt'), `${stopReason}\n`);
  return { responseText: finalText.slice(-32 * 1024) };
}
