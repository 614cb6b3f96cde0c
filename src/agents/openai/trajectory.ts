// The ATIF transcript of an openai turn, built from its conversation file: the system prompt and the
// instruction, then one agent step per model call with its tool calls, their results as observations, and
// the call's token usage.
import { agentStep, buildTrajectory, systemStep, userStep, type AtifTrajectory, type StepInput } from '../../trajectory/atif.ts';
import { BASH_TOOL } from './bash-tool.ts';
import { readConversation, toolResultFor } from './conversation.ts';
import type { ConversationRecord, ModelUsage } from './types.ts';

export interface OpenAiTrajectoryOptions {
  sessionId: string;
  modelName?: string;
  agentName?: string;
  agentVersion?: string;
}

export interface OpenAiTranscript {
  trajectory: AtifTrajectory;
  /** The last assistant message's text ('' when there is none): the turn's response. */
  finalText: string;
  usage: ModelUsage & { calls: number };
}

export function finalTextOf(records: readonly ConversationRecord[]): string {
  for (let i = records.length - 1; i >= 0; i--) {
    const m = records[i]!.message;
    if (m.role === 'assistant') return m.content ?? '';
  }
  return '';
}

export function usageOf(records: readonly ConversationRecord[]): ModelUsage & { calls: number } {
  const calls = records.filter((r) => r.message.role === 'assistant');
  return {
    promptTokens: calls.reduce((a, r) => a + (r.usage?.promptTokens ?? 0), 0),
    completionTokens: calls.reduce((a, r) => a + (r.usage?.completionTokens ?? 0), 0),
    calls: calls.length,
  };
}

export function transcriptOf(records: readonly ConversationRecord[], opts: OpenAiTrajectoryOptions): OpenAiTranscript {
  const steps: StepInput[] = [];
  for (const r of records) {
    const m = r.message;
    if (m.role === 'system') steps.push(systemStep(m.content, { timestamp: r.at }));
    else if (m.role === 'user') steps.push(userStep(m.content, { timestamp: r.at }));
    else if (m.role === 'assistant') {
      steps.push(
        agentStep({
          message: m.content ?? '',
          timestamp: r.at,
          modelName: r.model ?? opts.modelName,
          llmCallCount: 1,
          reasoningContent: r.reasoning,
          toolCalls: (m.tool_calls ?? []).map((c) => {
            const result = toolResultFor(records, c.id);
            let args: Record<string, unknown>;
            try {
              const v: unknown = JSON.parse(c.function.arguments);
              args = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { raw: c.function.arguments };
            } catch {
              args = { raw: c.function.arguments };
            }
            return {
              id: c.id,
              name: c.function.name,
              arguments: args,
              ...(result && result.message.role === 'tool' ? { output: result.message.content } : {}),
            };
          }),
          metrics: r.usage ? { prompt_tokens: r.usage.promptTokens, completion_tokens: r.usage.completionTokens } : undefined,
          extra: r.finish_reason ? { finish_reason: r.finish_reason } : undefined,
        }),
      );
    }
  }
  const trajectory = buildTrajectory({
    sessionId: opts.sessionId,
    agent: {
      name: opts.agentName ?? 'openai',
      version: opts.agentVersion ?? '1.0.0',
      ...(opts.modelName ? { model_name: opts.modelName } : {}),
      tool_definitions: [BASH_TOOL as unknown as Record<string, unknown>],
    },
    steps,
  });
  return { trajectory, finalText: finalTextOf(records), usage: usageOf(records) };
}

export async function openaiTrajectory(conversationPath: string, opts: OpenAiTrajectoryOptions): Promise<OpenAiTranscript> {
  return transcriptOf(await readConversation(conversationPath), opts);
}
