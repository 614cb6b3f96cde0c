// What an openai turn does next, decided from its conversation file alone: the in-process loop and a durable
// workflow (which sees only this small answer, never the conversation) take the same decisions.
import { pendingToolCalls, readConversation } from './conversation.ts';
import { callBudgetOf } from './limits.ts';
import type { ConversationRecord, ToolCall } from './types.ts';

export type NextAction =
  /** Tool calls of the last model answer still without a result: run each (runBashTool), then ask again. */
  | { kind: 'run_tools'; calls: ToolCall[] }
  /** Ask the model (callModel); `callNumber` counts from 1 within the turn. */
  | { kind: 'call_model'; callNumber: number }
  /** `answered`: the model replied without a tool call; `call_limit`: maxCalls calls were made. */
  | { kind: 'done'; reason: 'answered' | 'call_limit' };

export function nextActionOf(records: readonly ConversationRecord[], maxCalls: number): NextAction {
  const pending = pendingToolCalls(records);
  if (pending.length > 0) return { kind: 'run_tools', calls: pending };
  if (records.at(-1)?.message.role === 'assistant') return { kind: 'done', reason: 'answered' };
  const made = records.filter((r) => r.message.role === 'assistant').length;
  if (callBudgetOf(made, maxCalls).reached) return { kind: 'done', reason: 'call_limit' };
  return { kind: 'call_model', callNumber: made + 1 };
}

export async function nextAction(conversationPath: string, maxCalls: number): Promise<NextAction> {
  return nextActionOf(await readConversation(conversationPath), maxCalls);
}
