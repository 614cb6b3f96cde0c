// The durable openai turn's loop, decided from its conversation file alone: what the turn has spent so far and what
// it does next. A retried attempt (its worker killed) reads the same file and so resumes where the last one stopped:
// an answer or a tool output already recorded is never asked for again. The decisions and stop reasons are those of
// the workflow that made each call its own activity (src/workflows/openai-turn.ts, before patch
// openai-turn-in-one-activity).
import { pendingToolCalls } from './conversation.ts';
import type { ConversationRecord, ToolCall } from './types.ts';

/** What the turn's model calls spent, summed over the file's answers. */
export interface TurnTally {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** Set once any call went through the gateway (which counts cached input). */
  cachedTokens?: number;
  /** Set once any call had a price. */
  costUsd?: number;
  /** Time the calls were held at the gateway by a trainer's drain: the turn's budget moves on by it. */
  heldMs: number;
}

export function tallyOf(records: readonly ConversationRecord[]): TurnTally {
  const t: TurnTally = { calls: 0, promptTokens: 0, completionTokens: 0, heldMs: 0 };
  for (const r of records) {
    if (r.message.role !== 'assistant') continue;
    t.calls++;
    t.promptTokens += r.usage?.promptTokens ?? 0;
    t.completionTokens += r.usage?.completionTokens ?? 0;
    const g = r.gateway;
    if (!g) continue;
    if (g.cached_tokens !== undefined) t.cachedTokens = (t.cachedTokens ?? 0) + g.cached_tokens;
    if (g.cost_usd !== undefined) t.costUsd = (t.costUsd ?? 0) + g.cost_usd;
    t.heldMs += g.held_ms ?? 0;
  }
  return t;
}

export interface TurnLimits {
  maxCalls: number;
  /** Longest one bash call may run, in seconds. */
  toolTimeoutSec: number;
  /** Epoch ms the turn's budget ends, before any held time is added. */
  deadline: number;
}

export type TurnStep =
  | { kind: 'call_model' }
  | { kind: 'run_tool'; call: ToolCall; timeoutSec: number }
  /** `stopReason` null: the model answered without a tool call. `outcome`: the gateway stopped the episode (a token or cost limit). */
  | { kind: 'stop'; stopReason: string | null; outcome?: { kind: string; reason: string } };

export const callLimitReason = (maxCalls: number): string => `the turn reached its limit of ${maxCalls} model calls`;
export const TIME_BUDGET_REASON = 'the turn ran out of its time budget';

export function turnStepOf(records: readonly ConversationRecord[], limits: TurnLimits, now: number): TurnStep {
  const tally = tallyOf(records);
  const deadline = limits.deadline + tally.heldMs;
  const last = records.at(-1);
  const lastAnswer = records.findLast((r) => r.message.role === 'assistant');
  const limit = lastAnswer?.gateway?.limit;
  if (limit) return { kind: 'stop', stopReason: limit.reason, outcome: limit };
  const pending = pendingToolCalls(records);
  if (pending.length > 0) {
    const leftSec = Math.floor((deadline - now) / 1000);
    if (leftSec >= 1) return { kind: 'run_tool', call: pending[0]!, timeoutSec: Math.min(limits.toolTimeoutSec, leftSec) };
    // Out of time with a call unanswered: the model cannot be asked again (an endpoint refuses an unanswered call).
    return { kind: 'stop', stopReason: tally.calls >= limits.maxCalls ? callLimitReason(limits.maxCalls) : TIME_BUDGET_REASON };
  }
  if (last?.message.role === 'assistant') return { kind: 'stop', stopReason: null };
  if (tally.calls >= limits.maxCalls) return { kind: 'stop', stopReason: callLimitReason(limits.maxCalls) };
  if (now >= deadline) return { kind: 'stop', stopReason: TIME_BUDGET_REASON };
  return { kind: 'call_model' };
}
