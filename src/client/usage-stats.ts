// Model usage over a batch's rows (the gateway's counts): totals, and per task the mean over its episodes.
import { sumUsage } from '../workflows/public.ts';
import type { ResultRow, TokenUsage } from '../workflows/types.ts';

export interface UsageMetrics {
  total: TokenUsage;
  /** Per task: the mean per episode of those that called a model. */
  per_task_mean: Record<string, { promptTokens: number; completionTokens: number; cachedTokens?: number; costUsd?: number; calls: number }>;
}

const round = (n: number, places = 2): number => Math.round(n * 10 ** places) / 10 ** places;

export function usageMetrics(rows: readonly ResultRow[]): UsageMetrics | undefined {
  const used = rows.filter((r) => r.usage);
  const total = sumUsage(used.map((r) => r.usage!));
  if (!total) return undefined;
  const byTask = new Map<string, TokenUsage[]>();
  for (const r of used) byTask.set(r.task_id, [...(byTask.get(r.task_id) ?? []), r.usage!]);
  const per_task_mean: UsageMetrics['per_task_mean'] = {};
  for (const [task, list] of [...byTask.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const sum = sumUsage(list)!;
    const n = list.length;
    per_task_mean[task] = {
      promptTokens: round(sum.promptTokens / n), completionTokens: round(sum.completionTokens / n), calls: round(sum.calls / n),
      ...(sum.cachedTokens !== undefined ? { cachedTokens: round(sum.cachedTokens / n) } : {}),
      ...(sum.costUsd !== undefined ? { costUsd: round(sum.costUsd / n, 6) } : {}),
    };
  }
  return { total, per_task_mean };
}
