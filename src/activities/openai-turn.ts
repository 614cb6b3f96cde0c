// The openai agent's whole turn as one activity on the sandbox's host: its model calls and tool calls in a loop,
// durable call by call through the conversation file (src/agents/openai/turn-step.ts), so a retried attempt resumes
// where the killed one stopped. One activity instead of one per call: under load each dispatch and workflow task
// cost about as much as a call.
import { Context, heartbeat } from '@temporalio/activity';
import { ContextLengthExceeded, readConversation, tallyOf, turnStepOf, type TurnStep } from '../agents/index.ts';
import type { HostServices } from '../host/deps.ts';
import { phaseTargets } from '../host/handle.ts';
import { enterPhase } from '../host/phase-network.ts';
import { beating } from './beating.ts';
import { typed } from './failures.ts';
import { modelCallThroughGateway, runToolCall, writeTurnTranscript } from './openai.ts';
import type { OpenAiTurnSetup, TokenUsage, TurnRef } from './types.ts';

export interface OpenAiTurnRequest {
  ref: TurnRef;
  setup: OpenAiTurnSetup;
  /** Epoch ms the turn's budget ends, as the workflow set it when the turn began; held time moves it on. */
  deadline: number;
}

/** Everything of AgentTurnOutput but the turn's wall time, which the workflow measures. */
export interface OpenAiTurnResult {
  /** Bounded: the full text is in the turn's logs folder. */
  responseText: string;
  usage: TokenUsage;
  agentOutcome?: { kind: string; reason: string };
}

type Stop = Extract<TurnStep, { kind: 'stop' }>;

export async function openaiTurn(deps: HostServices, req: OpenAiTurnRequest): Promise<OpenAiTurnResult> {
  return typed(() => beating(async () => {
    const { ref, setup } = req;
    const signal = Context.current().cancellationSignal;
    // Each attempt is the agent phase: a worker restarted since the turn began puts the sandbox back on its network.
    await enterPhase(deps, await deps.loadEpisodeTask(ref.input), phaseTargets(ref.sandbox), ref.turn, 'agent', ref.input.agent);
    const limits = { maxCalls: setup.maxCalls, toolTimeoutSec: setup.toolTimeoutSec, deadline: req.deadline };
    let stop: Stop;
    for (;;) {
      signal.throwIfAborted();
      const records = await readConversation(setup.conversationPath);
      const step = turnStepOf(records, limits, Date.now());
      if (step.kind === 'stop') {
        stop = step;
        break;
      }
      if (step.kind === 'run_tool') {
        await runToolCall(deps, ref, setup, step.call, step.timeoutSec);
        continue;
      }
      const spent = tallyOf(records);
      heartbeat({ call: spent.calls + 1 });
      const episodeLimits = ref.input.limits;
      try {
        await modelCallThroughGateway(deps, setup,
          episodeLimits ? { tokens: spent.promptTokens + spent.completionTokens, costUsd: spent.costUsd ?? 0, limits: episodeLimits } : undefined,
          { noteInRecord: true });
      } catch (err) {
        if (!(err instanceof ContextLengthExceeded)) throw err;
        stop = { kind: 'stop', stopReason: `context length exceeded: ${err.message}` };
        break;
      }
    }
    const t = tallyOf(await readConversation(setup.conversationPath));
    const { responseText } = await writeTurnTranscript(deps, ref, setup, stop.stopReason);
    return {
      responseText,
      usage: {
        promptTokens: t.promptTokens, completionTokens: t.completionTokens, calls: t.calls,
        ...(t.cachedTokens !== undefined ? { cachedTokens: t.cachedTokens } : {}), ...(t.costUsd !== undefined ? { costUsd: t.costUsd } : {}),
      },
      ...(stop.outcome ? { agentOutcome: stop.outcome } : {}),
    };
  }));
}
