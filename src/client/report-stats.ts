// Pure numbers behind the HTML report: pass@k per task, reward histogram, failure kinds, phase timings.
import type { ResultRow } from '../workflows/types.ts';
import { newestAttempts, passAtK } from './results.ts';

/** docs/design.md section 7: success means reward ≥ 1. */
export const isSuccess = (r: ResultRow): boolean => !r.mask_sample && (r.reward ?? 0) >= 1;

export interface TaskPassAtK {
  taskId: string;
  /** The newest attempt of each repeat, by repeat number. */
  byRepeat: Map<number, ResultRow>;
  /** Unmasked samples and successes among them. */
  n: number;
  c: number;
  /** pass@k for k = 1..K (K = the batch's largest repeat count); null where k > n. */
  passAtK: Array<number | null>;
}

export interface PassAtKTable {
  /** Repeat numbers seen in any task, ascending (the table's reward columns). */
  repeats: number[];
  /** Largest k reported: the largest number of repeats of any task. */
  maxK: number;
  tasks: TaskPassAtK[];
  /** Mean over the tasks with at least k unmasked samples; `tasks` says how many those were. */
  overall: Array<{ k: number; value: number | null; tasks: number }>;
}

export function passAtKTable(rows: ResultRow[]): PassAtKTable {
  const reported = newestAttempts(rows);
  const byTask = new Map<string, Map<number, ResultRow>>();
  for (const r of reported) {
    const m = byTask.get(r.task_id) ?? new Map<number, ResultRow>();
    m.set(r.repeat, r);
    byTask.set(r.task_id, m);
  }
  const repeats = [...new Set(reported.map((r) => r.repeat))].sort((a, b) => a - b);
  const maxK = Math.max(0, ...[...byTask.values()].map((m) => m.size));
  const tasks = [...byTask.entries()].map(([taskId, byRepeat]): TaskPassAtK => {
    const unmasked = [...byRepeat.values()].filter((r) => !r.mask_sample);
    const n = unmasked.length;
    const c = unmasked.filter(isSuccess).length;
    const values = Array.from({ length: maxK }, (_, i) => (i + 1 <= n ? passAtK(n, c, i + 1) : null));
    return { taskId, byRepeat, n, c, passAtK: values };
  });
  const overall = Array.from({ length: maxK }, (_, i) => {
    const counted = tasks.map((t) => t.passAtK[i]).filter((v): v is number => v !== null && v !== undefined);
    return { k: i + 1, value: counted.length ? counted.reduce((a, b) => a + b, 0) / counted.length : null, tasks: counted.length };
  });
  return { repeats, maxK, tasks, overall };
}

export interface Bin { lo: number; hi: number; count: number }

/**
 * Equal-width bins over [min(0, lowest), max(1, highest)], so rewards in [0, 1] always get the
 * same ten bins. The last bin includes its upper edge.
 */
export function histogramBins(values: number[], count = 10): Bin[] {
  const lo = Math.min(0, ...values);
  const hi = Math.max(1, ...values);
  const width = (hi - lo) / count;
  const bins: Bin[] = Array.from({ length: count }, (_, i) => ({ lo: lo + i * width, hi: i === count - 1 ? hi : lo + (i + 1) * width, count: 0 }));
  for (const v of values) {
    // The epsilon keeps 0.3 / 0.1 = 2.9999999999999996 in the bin that starts at 0.3.
    const i = Math.min(count - 1, Math.max(0, Math.floor((v - lo) / width + 1e-9)));
    bins[i]!.count++;
  }
  return bins;
}

export interface Counts { episodes: number; scored: number; masked: number; failed: number; meanReward: number | null }

/** `failed` counts episodes whose workflow failed or was cancelled: they have no row (metrics.json `failed`). */
export function countsOf(rows: ResultRow[], failed: number): Counts {
  const unmasked = rows.filter((r) => !r.mask_sample);
  return {
    episodes: rows.length + failed,
    scored: unmasked.length,
    masked: rows.length - unmasked.length,
    failed,
    meanReward: unmasked.length ? unmasked.reduce((s, r) => s + (r.reward ?? 0), 0) / unmasked.length : null,
  };
}

export interface FailureKindSummary {
  kind: string;
  count: number;
  /** Whether its rows counted: all masked, all scored, or (unexpectedly) both. */
  counts: 'masked' | 'scored' | 'mixed';
  example: string | null;
  exampleTask: string | null;
}

export function failureKinds(rows: ResultRow[]): FailureKindSummary[] {
  const by = new Map<string, ResultRow[]>();
  for (const r of rows) if (r.failure_kind) by.set(r.failure_kind, [...(by.get(r.failure_kind) ?? []), r]);
  return [...by.entries()]
    .map(([kind, rs]) => {
      const masked = rs.filter((r) => r.mask_sample).length;
      const withReason = rs.find((r) => r.failure_reason);
      return {
        kind,
        count: rs.length,
        counts: masked === rs.length ? 'masked' as const : masked === 0 ? 'scored' as const : 'mixed' as const,
        example: withReason?.failure_reason ?? null,
        exampleTask: withReason ? `${withReason.task_id} #${withReason.repeat}` : null,
      };
    })
    .sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
}

export interface PhaseStats { phase: string; n: number; mean: number; median: number; max: number }

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Per phase, over the rows that timed it; phases in the order they first appear. */
export function timingStats(rows: ResultRow[]): PhaseStats[] {
  const by = new Map<string, number[]>();
  for (const r of rows) {
    for (const [phase, sec] of Object.entries(r.timings ?? {})) {
      if (typeof sec !== 'number' || !Number.isFinite(sec)) continue;
      by.set(phase, [...(by.get(phase) ?? []), sec]);
    }
  }
  return [...by.entries()].map(([phase, v]) => ({
    phase, n: v.length, mean: v.reduce((a, b) => a + b, 0) / v.length, median: median(v), max: Math.max(...v),
  }));
}
