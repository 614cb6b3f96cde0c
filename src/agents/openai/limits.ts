// The per-turn limit on model calls. A turn's conversation file holds that turn alone (a fresh session per
// step), so the calls made so far are its assistant messages.
import { readConversation } from './conversation.ts';

export const DEFAULT_MAX_CALLS = 50;

export interface CallBudget {
  made: number;
  left: number;
  reached: boolean;
}

export function callBudgetOf(made: number, maxCalls: number): CallBudget {
  if (!Number.isInteger(maxCalls) || maxCalls < 1) {
    throw new RangeError(`maxCalls must be a whole number of at least 1 (got ${maxCalls})`);
  }
  const left = Math.max(0, maxCalls - made);
  return { made, left, reached: left === 0 };
}

export async function callBudget(conversationPath: string, maxCalls: number): Promise<CallBudget> {
  const records = await readConversation(conversationPath);
  return callBudgetOf(records.filter((r) => r.message.role === 'assistant').length, maxCalls);
}
