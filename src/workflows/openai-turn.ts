import { ActivityFailure, ApplicationFailure, continueAsNew, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { HostActivities } from '../activities/host-activities.ts';
import type { SharedActivities } from '../activities/shared-activities.ts';
import { FINAL_ERROR_TYPES } from './failures.ts';
import type { AgentTurnOutput, OpenAiTurnState, TurnRef } from './types.ts';

const GRACE_SEC = 60;
/** Model calls per run before the turn continues as new, keeping each history small. */
const CALLS_PER_RUN = 25;
const MODEL_CALLS_ON_HOST = 'model-calls-on-the-sandbox-host';
const TURN_IN_ONE_ACTIVITY = 'openai-turn-in-one-activity';
/**
 * What the one-activity turn may run past its budget before Temporal stops the attempt: the turn checks its own budget
 * between calls, so this covers one model call begun just before the end (its retries) and the time a trainer's
 * drain holds calls at the gateway (which moves the budget on).
 */
const TURN_OVERRUN_SEC = 3600;

function acts(ref: TurnRef) {
  // On a cluster the conversation stays with the worker that keeps the episode's files (src/activities/files-home.ts).
  const hostOpts = { taskQueue: ref.sandbox.filesQueue ?? ref.sandbox.queue, scheduleToStartTimeout: `${ref.plan.scheduleToStartSec} seconds` } as const;
  const retry = { maximumAttempts: 3, nonRetryableErrorTypes: [...FINAL_ERROR_TYPES, 'berth:conversation_lost'] };
  return {
    // Model calls run on the sandbox's host, where the conversation file is, so hosts share no storage. Turns that
    // began before the change keep calling on the shared queue.
    model: proxyActivities<SharedActivities>({ ...(patched(MODEL_CALLS_ON_HOST) ? hostOpts : {}), startToCloseTimeout: '15 minutes', heartbeatTimeout: '2 minutes', retry: { maximumAttempts: 4, nonRetryableErrorTypes: [...FINAL_ERROR_TYPES, 'berth:context_length', 'AgentConfigError'] } }),
    host: proxyActivities<HostActivities>({ ...hostOpts, startToCloseTimeout: `${ref.plan.steps[ref.turn]!.agentTimeoutSec + GRACE_SEC} seconds`, heartbeatTimeout: `${ref.plan.heartbeatTimeoutSec} seconds`, retry }),
    // A killed worker's attempt ends by its heartbeat timeout; the next resumes from the conversation file.
    turn: proxyActivities<HostActivities>({
      ...hostOpts, startToCloseTimeout: `${ref.plan.steps[ref.turn]!.agentTimeoutSec + GRACE_SEC + TURN_OVERRUN_SEC} seconds`, heartbeatTimeout: `${ref.plan.heartbeatTimeoutSec} seconds`,
      retry: { maximumAttempts: 4, nonRetryableErrorTypes: [...FINAL_ERROR_TYPES, 'berth:conversation_lost', 'AgentConfigError'] },
    }),
  };
}

/**
 * The turn as one activity on the sandbox's host (src/activities/openai-turn.ts): the model and tool calls in a loop
 * there, durable call by call through the conversation file. History holds the start, that activity and the usage.
 */
async function turnInOneActivity(ref: TurnRef, a: ReturnType<typeof acts>): Promise<AgentTurnOutput> {
  const setup = await a.host.openaiStart.executeWithOptions({ summary: `openai start turn ${ref.turn + 1}` }, [ref]);
  const startedAt = Date.now();
  const deadline = startedAt + ref.plan.steps[ref.turn]!.agentTimeoutSec * 1000;
  const done = await a.turn.openaiTurn.executeWithOptions({ summary: `openai turn ${ref.turn + 1}` }, [{ ref, setup, deadline }]);
  return {
    responseText: done.responseText, exitCode: null,
    timings: { agent: (Date.now() - startedAt) / 1000 },
    usage: done.usage,
    ...(done.agentOutcome ? { agentOutcome: done.agentOutcome } : {}),
  };
}

/**
 * One openai agent turn, durable call by call. Turns begun before patch openai-turn-in-one-activity (and their runs
 * continued as new) make each model call and each bash call an activity on the sandbox's host, where the
 * conversation lives in a file.
 */
export async function openaiTurnWorkflow(ref: TurnRef, carried?: OpenAiTurnState): Promise<AgentTurnOutput> {
  const a = acts(ref);
  if (!carried && patched(TURN_IN_ONE_ACTIVITY)) return turnInOneActivity(ref, a);
  const state: OpenAiTurnState = carried ?? {
    setup: await a.host.openaiStart.executeWithOptions({ summary: `openai start turn ${ref.turn + 1}` }, [ref]),
    calls: 0, promptTokens: 0, completionTokens: 0, startedAt: Date.now(),
    deadline: Date.now() + ref.plan.steps[ref.turn]!.agentTimeoutSec * 1000,
  };
  let stopReason: string | null = null;
  let agentOutcome: { kind: string; reason: string } | undefined;
  let runCalls = 0;
  for (;;) {
    if (state.calls >= state.setup.maxCalls) { stopReason = `the turn reached its limit of ${state.setup.maxCalls} model calls`; break; }
    if (Date.now() >= state.deadline) { stopReason = 'the turn ran out of its time budget'; break; }
    if (runCalls >= CALLS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof openaiTurnWorkflow>(ref, state);
    }
    let answer;
    try {
      const limits = ref.input.limits;
      answer = await a.model.openaiModelCall.executeWithOptions({ summary: `model call ${state.calls + 1}` },
        limits ? [state.setup, { tokens: state.promptTokens + state.completionTokens, costUsd: state.costUsd ?? 0, limits }] : [state.setup]);
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === 'berth:context_length') { stopReason = `context length exceeded: ${cause.message}`; break; }
      throw err;
    }
    state.calls++;
    runCalls++;
    // A drain is the trainer's pause, not the agent's time: the budget moves on by what the call was held.
    if (answer.heldMs) state.deadline += answer.heldMs;
    state.promptTokens += answer.promptTokens;
    state.completionTokens += answer.completionTokens;
    if (answer.cachedTokens !== undefined) state.cachedTokens = (state.cachedTokens ?? 0) + answer.cachedTokens;
    if (answer.costUsd !== undefined) state.costUsd = (state.costUsd ?? 0) + answer.costUsd;
    if (answer.limit) { agentOutcome = answer.limit; stopReason = answer.limit.reason; break; }
    if (answer.toolCallIds.length === 0) break;
    for (const id of answer.toolCallIds) {
      const left = Math.floor((state.deadline - Date.now()) / 1000);
      if (left < 1) break;
      await a.host.openaiToolCall.executeWithOptions({ summary: `bash ${id}` }, [{ ref, setup: state.setup, toolCallId: id, timeoutSec: Math.min(state.setup.toolTimeoutSec, left) }]);
    }
  }
  const done = await a.host.openaiFinish.executeWithOptions({ summary: 'openai transcript' }, [{ ref, setup: state.setup, stopReason }]);
  return {
    responseText: done.responseText, exitCode: null,
    timings: { agent: (Date.now() - state.startedAt) / 1000 },
    usage: {
      promptTokens: state.promptTokens, completionTokens: state.completionTokens, calls: state.calls,
      ...(state.cachedTokens !== undefined ? { cachedTokens: state.cachedTokens } : {}), ...(state.costUsd !== undefined ? { costUsd: state.costUsd } : {}),
    },
    ...(agentOutcome ? { agentOutcome } : {}),
  };
}
