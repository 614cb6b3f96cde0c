import { appendFileSync, mkdirSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultRow } from '../workflows/types.ts';
import { newestOf } from './newest.ts';
import { usageMetrics, type UsageMetrics } from './usage-stats.ts';

export interface SkippedEntry { task_id: string; path: string; reason: string; stage: 'load' | 'prepare' | 'seed' }

export interface Metrics {
  mean_reward: number | null;
  scored: number;
  masked: number;
  failed: number;
  failure_kinds: Record<string, number>;
  pass_at_k?: Record<string, number>;
  /** Model tokens and cost as the gateway counted them (agents that call a model). */
  usage?: UsageMetrics;
}

/** Unbiased pass@k over n samples with c successes: 1 - C(n-c, k) / C(n, k). */
export function passAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

export function metricsOf(rows: ResultRow[], failed = 0): Metrics {
  const unmasked = rows.filter((r) => !r.mask_sample);
  const kinds: Record<string, number> = {};
  for (const r of rows) if (r.failure_kind) kinds[r.failure_kind] = (kinds[r.failure_kind] ?? 0) + 1;
  const m: Metrics = {
    mean_reward: unmasked.length ? unmasked.reduce((s, r) => s + (r.reward ?? 0), 0) / unmasked.length : null,
    scored: unmasked.length,
    masked: rows.length - unmasked.length,
    failed,
    failure_kinds: kinds,
  };
  const usage = usageMetrics(rows);
  if (usage) m.usage = usage;
  const passes = passAtKOf(unmasked.map((r) => ({ task: r.task_id, reward: r.reward ?? 0 })));
  if (passes.length > 0) m.pass_at_k = Object.fromEntries(passes.map((v, i) => [`pass@${i + 1}`, v]));
  return m;
}

/**
 * pass@1 … pass@n averaged over tasks, n the fewest scored samples any task has (success: reward ≥ 1); empty when a
 * task has a single sample.
 */
export function passAtKOf(samples: ReadonlyArray<{ task: string; reward: number }>): number[] {
  const byTask = new Map<string, number[]>();
  for (const s of samples) byTask.set(s.task, [...(byTask.get(s.task) ?? []), s.reward]);
  const n = Math.min(...[...byTask.values()].map((rs) => rs.length));
  if (byTask.size === 0 || n <= 1) return [];
  return Array.from({ length: n }, (_, i) => {
    const per = [...byTask.values()].map((rs) => passAtK(rs.length, rs.filter((r) => r >= 1).length, i + 1));
    return per.reduce((a, b) => a + b, 0) / per.length;
  });
}

/** The newest attempt of each (task, repeat) is the one reported. */
export const newestAttempts = (rows: ResultRow[]): ResultRow[] =>
  newestOf(rows, (r) => ({ task: r.task_id, repeat: r.repeat, attempt: r.attempt }));

export interface BatchLabels { batch_id?: string; dataset?: string; agent?: string }

export class ResultsFolder {
  /** Nothing is made on disk until something is written. */
  constructor(readonly dir: string) {}

  get rolloutsPath(): string { return join(this.dir, 'rollouts.jsonl'); }

  append(row: ResultRow): void {
    mkdirSync(this.dir, { recursive: true });
    appendFileSync(this.rolloutsPath, `${JSON.stringify(row)}\n`);
  }

  readRows(): ResultRow[] {
    if (!existsSync(this.rolloutsPath)) return [];
    return readFileSync(this.rolloutsPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ResultRow);
  }

  /** Rewrites rollouts.jsonl with the newest attempts and writes metrics.json (with the batch's labels when known). */
  finish(rows: ResultRow[], failed: number, labels: BatchLabels = {}): Metrics {
    const reported = newestAttempts(rows);
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(this.rolloutsPath, reported.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const metrics = metricsOf(reported, failed);
    writeFileSync(join(this.dir, 'metrics.json'), `${JSON.stringify({ ...labels, ...metrics }, null, 2)}\n`);
    return metrics;
  }

  writeSkipped(entries: SkippedEntry[]): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(join(this.dir, 'skipped.json'), `${JSON.stringify(entries, null, 2)}\n`);
  }
}
