// Reads what `berth report` needs from a results folder and writes the page next to it.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ResultsFolder, type Metrics, type SkippedEntry } from './results.ts';
import { renderReport, type ReportOptions } from './report.ts';
import { labelsFromBatchId } from './report-labels.ts';
import type { ResultRow } from '../workflows/types.ts';

export interface ResultsForReport {
  rows: ResultRow[];
  skipped: SkippedEntry[];
  /** metrics.json when present (written when a batch finishes or `berth results` collects it). */
  metrics: (Partial<Metrics> & Record<string, unknown>) | null;
}

function readJson<T>(path: string): T | null {
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    throw new Error(`${path} is not valid JSON (${(err as Error).message}). Collect the batch again with \`npx berth results BATCH\`.`);
  }
}

export function readResultsForReport(dir: string): ResultsForReport {
  const rows = new ResultsFolder(dir).readRows();
  const skipped = readJson<SkippedEntry[]>(join(dir, 'skipped.json')) ?? [];
  const metrics = readJson<ResultsForReport['metrics']>(join(dir, 'metrics.json'));
  return { rows, skipped: Array.isArray(skipped) ? skipped : [], metrics };
}

export interface WriteReportOptions extends Omit<ReportOptions, 'skipped' | 'failed' | 'resultsDir'> {
  resultsDir: string;
  /** Default: <resultsDir>/report.html */
  out?: string;
}

/**
 * Renders the results folder's rows to one HTML file; returns its absolute path. Dataset and agent:
 * the caller's (e.g. from Temporal), else metrics.json's, else the dataset named in a generated batch id.
 */
export function writeReport(opts: WriteReportOptions): string {
  const dir = resolve(opts.resultsDir);
  const { rows, skipped, metrics } = readResultsForReport(dir);
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const html = renderReport(rows, {
    batchId: opts.batchId,
    dataset: opts.dataset ?? str(metrics?.dataset) ?? labelsFromBatchId(opts.batchId).dataset ?? null,
    agent: opts.agent ?? str(metrics?.agent) ?? null,
    skipped,
    failed: typeof metrics?.failed === 'number' ? metrics.failed : 0,
    resultsDir: dir,
    generatedAt: opts.generatedAt,
  });
  const out = resolve(opts.out ?? join(dir, 'report.html'));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, html);
  return out;
}
