// Reads what `berth report` and `berth view` need from a results folder: the batch page and one page per episode.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { workflowUiLink } from '../config/temporal.ts';
import { readEpisodeFiles } from './episode-files.ts';
import { ResultsFolder, type Metrics, type SkippedEntry } from './results.ts';
import { renderReport, type ReportOptions } from './report.ts';
import { renderEpisodePage } from './report-episode.ts';
import { labelsFromBatchId } from './report-labels.ts';
import { episodePagePath } from './report-paths.ts';
import type { ResultRow } from '../workflows/types.ts';
import { harborJobLabels, isHarborJobDir, rowsOfHarborJob } from './harbor-job/reader.ts';
import { trialName } from './harbor-job/names.ts';

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

/** A results folder's rows, metrics and skipped tasks; a Harbor job directory without rollouts.jsonl reads as rows. */
export function readResultsForReport(dir: string): ResultsForReport {
  const folder = new ResultsFolder(dir);
  if (!existsSync(folder.rolloutsPath) && isHarborJobDir(dir)) return { rows: rowsOfHarborJob(dir), skipped: [], metrics: { ...harborJobLabels(dir) } };
  const rows = folder.readRows();
  const skipped = readJson<SkippedEntry[]>(join(dir, 'skipped.json')) ?? [];
  const metrics = readJson<ResultsForReport['metrics']>(join(dir, 'metrics.json'));
  return { rows, skipped: Array.isArray(skipped) ? skipped : [], metrics };
}

export interface WriteReportOptions extends Omit<ReportOptions, 'skipped' | 'failed' | 'resultsDir' | 'episodePages'> {
  resultsDir: string;
  /** Default: <resultsDir>/report.html; the episode pages go into episodes/ beside it. */
  out?: string;
}

/** The report's file set: page paths relative to the batch page's folder, each rendered when asked for. */
export interface ReportSite {
  /** The batch page's file name (report.html unless --out says otherwise). */
  index: string;
  paths(): string[];
  render(path: string): string | undefined;
}

/**
 * The batch page and a page per row (every attempt in rollouts.jsonl). Dataset and agent: the caller's (e.g. from
 * Temporal), else metrics.json's, else the dataset named in a generated batch id.
 */
export function reportSite(opts: WriteReportOptions): ReportSite {
  const dir = resolve(opts.resultsDir);
  const { rows, skipped, metrics } = readResultsForReport(dir);
  const index = basename(opts.out ?? 'report.html');
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const byPath = new Map<string, ResultRow>();
  for (const r of rows) byPath.set(episodePagePath(r), r);
  const batchPage = () => renderReport(rows, {
    batchId: opts.batchId,
    dataset: opts.dataset ?? str(metrics?.dataset) ?? labelsFromBatchId(opts.batchId).dataset ?? null,
    agent: opts.agent ?? str(metrics?.agent) ?? null,
    skipped,
    failed: typeof metrics?.failed === 'number' ? metrics.failed : 0,
    resultsDir: dir,
    generatedAt: opts.generatedAt,
    episodePages: true,
  });
  // The host's logs folder when it is on this machine, else the row's trial folder in the job directory.
  const logsOf = (row: ResultRow) => {
    const trial = join(dir, trialName(row.task_id, row.workflow_id));
    return row.logs_dir && !existsSync(row.logs_dir) && existsSync(trial) ? trial : row.logs_dir;
  };
  const episodePage = (row: ResultRow) => renderEpisodePage(row, readEpisodeFiles(logsOf(row), row.turns.map((t) => t.step)), {
    batchId: opts.batchId,
    batchPage: `../${index}`,
    uiLink: workflowUiLink(row.workflow_id, row.run_id),
    attempts: rows.filter((r) => r.task_id === row.task_id && r.repeat === row.repeat),
  });
  return {
    index,
    paths: () => [index, ...byPath.keys()],
    render(path) {
      if (path === index) return batchPage();
      const row = byPath.get(path);
      return row ? episodePage(row) : undefined;
    },
  };
}

/** Writes the batch page and every episode page; returns the batch page's absolute path. */
export function writeReport(opts: WriteReportOptions): string {
  const out = resolve(opts.out ?? join(resolve(opts.resultsDir), 'report.html'));
  const site = reportSite(opts);
  for (const path of site.paths()) {
    const target = join(dirname(out), path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, site.render(path)!);
  }
  return out;
}
