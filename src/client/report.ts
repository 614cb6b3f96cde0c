// `renderReport`: one self-contained HTML page for a batch's rows (inline CSS and SVG, no scripts,
// nothing fetched at view time). Pure: the caller reads the results folder and writes the file.
import type { ResultRow } from '../workflows/types.ts';
import type { SkippedEntry } from './results.ts';
import { newestAttempts } from './results.ts';
import { clip, esc, htmlPage, htmlTable, num } from './report-html.ts';
import { countsOf, failureKinds, histogramBins, isSuccess, passAtKTable, timingStats, type PassAtKTable } from './report-stats.ts';
import { episodesSection } from './report-episodes.ts';
import { episodePagePath } from './report-paths.ts';
import { REPORT_CSS } from './report-style.ts';
import { histogramSvg, timingsSvg } from './report-svg.ts';

export interface ReportOptions {
  batchId: string;
  dataset?: string | null;
  agent?: string | null;
  /** skipped.json: tasks refused at load, prepare or seed. */
  skipped?: SkippedEntry[];
  /** Episodes whose workflow failed or was cancelled (metrics.json `failed`): they have no row. */
  failed?: number;
  resultsDir?: string;
  /** Shown in the header when given (left out by default so the output is deterministic). */
  generatedAt?: string;
  /** The file set has a page per episode (episodes/…): rows link to them. */
  episodePages?: boolean;
}

export function renderReport(allRows: ResultRow[], opts: ReportOptions): string {
  const rows = newestAttempts(allRows);
  const skipped = opts.skipped ?? [];
  const body = [
    headerSection(rows, opts, skipped.length),
    distributionSection(rows),
    passAtKSection(passAtKTable(rows), Boolean(opts.episodePages)),
    episodesSection(rows, { pages: Boolean(opts.episodePages) }),
    failuresSection(rows, opts.failed ?? 0),
    timingsSection(rows),
    skippedSection(skipped),
  ].join('\n');
  return htmlPage(`Berth report · ${opts.batchId}`, body, REPORT_CSS);
}

const card = (key: string, value: string, id: string): string =>
  `<div class="card" id="${id}"><div class="k">${esc(key)}</div><div class="v">${value}</div></div>`;

function headerSection(rows: ResultRow[], opts: ReportOptions, skipped: number): string {
  const c = countsOf(rows, opts.failed ?? 0);
  const meta = [
    `dataset <b>${esc(opts.dataset ?? 'unknown')}</b>`,
    `agent <b>${esc(opts.agent ?? 'unknown')}</b>`,
    ...(opts.resultsDir ? [`results <code>${esc(opts.resultsDir)}</code>`] : []),
    ...(opts.generatedAt ? [`generated ${esc(opts.generatedAt)}`] : []),
  ].join(' · ');
  return `<header>
<h1>Batch ${esc(opts.batchId)}</h1>
<p class="sub">${meta}</p>
<div class="cards">
${card('episodes', String(c.episodes), 'card-episodes')}
${card('scored', String(c.scored), 'card-scored')}
${card('masked', String(c.masked), 'card-masked')}
${card('failed', String(c.failed), 'card-failed')}
${card('skipped tasks', String(skipped), 'card-skipped')}
${card('mean reward', num(c.meanReward), 'card-mean')}
</div>
<p class="note">Mean reward is over the ${c.scored} unmasked (scored) rows; masked rows are excluded, failed episodes have no row.</p>
</header>`;
}

function distributionSection(rows: ResultRow[]): string {
  const values = rows.filter((r) => !r.mask_sample).map((r) => r.reward ?? 0);
  const inner = values.length ? histogramSvg(histogramBins(values)) : '<p class="empty">No unmasked rows.</p>';
  return `<section id="distribution"><h2>Reward distribution</h2>${inner}</section>`;
}

function rewardCell(r: ResultRow | undefined, pages: boolean): string {
  if (!r) return '<span class="mask" title="no row (the episode workflow failed, or has not been collected)">—</span>';
  const link = (inner: string) => (pages ? `<a href="${esc(episodePagePath(r))}">${inner}</a>` : inner);
  if (r.mask_sample) return link(`<span class="mask" title="${esc(r.failure_kind ?? 'masked')}">masked</span>`);
  const title = r.failure_kind ? ` title="${esc(r.failure_kind)}"` : '';
  const reward = r.reward ?? 0;
  const cls = isSuccess(r) ? 'ok' : reward > 0 ? 'partial' : 'bad';
  return link(`<span class="${cls}"${title}>${esc(num(reward))}</span>`);
}

function passAtKSection(t: PassAtKTable, pages: boolean): string {
  if (t.tasks.length === 0) return '<section id="pass-at-k"><h2>Per-task rewards and pass@k</h2><p class="empty">No rows.</p></section>';
  const ks = Array.from({ length: t.maxK }, (_, i) => i + 1);
  const headers = ['task', ...t.repeats.map((r) => `repeat ${r}`), '<span title="unmasked samples">n</span>', '<span title="successes: reward ≥ 1">c</span>', ...ks.map((k) => `pass@${k}`)];
  const rows = t.tasks.map((task) => [
    esc(task.taskId),
    ...t.repeats.map((r) => rewardCell(task.byRepeat.get(r), pages)),
    String(task.n),
    String(task.c),
    ...task.passAtK.map((v) => esc(num(v))),
  ]);
  const total = t.tasks.length;
  const overall = ['all tasks', ...t.repeats.map(() => ''), '', '',
    ...t.overall.map((o) => (o.tasks === total || o.value === null ? esc(num(o.value)) : `${esc(num(o.value))} <span class="note">(${o.tasks} of ${total} tasks)</span>`))];
  const table = htmlTable(headers, [...rows, { cls: 'overall', cells: overall }], 'pass-at-k');
  return `<section id="pass-at-k"><h2>Per-task rewards and pass@k</h2>
<p class="note">The newest attempt of each (task, repeat). pass@k is the unbiased estimator 1 − C(n−c, k)/C(n, k) over a task's n unmasked repeats with c successes (reward ≥ 1); the last row averages the tasks with at least k unmasked repeats.</p>
${table}</section>`;
}

function failuresSection(rows: ResultRow[], failed: number): string {
  const kinds = failureKinds(rows);
  const table = kinds.length
    ? htmlTable(['failure kind', 'counts as', 'episodes', 'example'], kinds.map((k) => [
      `<code>${esc(k.kind)}</code>`,
      k.counts === 'masked' ? '<span class="mask">masked</span>' : k.counts === 'scored' ? '<span class="bad">scored (0)</span>' : 'mixed',
      String(k.count),
      k.example ? `<div class="note">${esc(k.exampleTask)}</div><div class="reason">${esc(clip(k.example))}</div>` : '<span class="empty">no reason given</span>',
    ]), 'failures')
    : '<p class="empty">No row has a failure kind.</p>';
  const failedNote = failed
    ? `<p class="bad">${failed} episode workflow${failed === 1 ? '' : 's'} failed or ${failed === 1 ? 'was' : 'were'} cancelled (outcome <code>failed</code>): no row, not in the score.</p>`
    : '';
  return `<section id="failures"><h2>Failure kinds</h2>${table}${failedNote}</section>`;
}

function timingsSection(rows: ResultRow[]): string {
  const stats = timingStats(rows);
  if (!stats.length) return '<section id="timings"><h2>Phase timings</h2><p class="empty">No timings recorded.</p></section>';
  const table = htmlTable(['phase', 'episodes', 'mean (s)', 'median (s)', 'max (s)'], stats.map((s) => [
    esc(s.phase), String(s.n), esc(num(s.mean)), esc(num(s.median)), esc(num(s.max)),
  ]), 'timings');
  return `<section id="timings"><h2>Phase timings</h2>${table}${timingsSvg(stats)}</section>`;
}

function skippedSection(skipped: SkippedEntry[]): string {
  const inner = skipped.length
    ? htmlTable(['task', 'stage', 'reason', 'path'], skipped.map((s) => [
      esc(s.task_id), esc(s.stage), `<div class="reason">${esc(clip(s.reason))}</div>`, `<code>${esc(s.path)}</code>`,
    ]), 'skipped')
    : '<p class="empty">No task was skipped.</p>';
  return `<section id="skipped"><h2>Skipped tasks</h2>${inner}</section>`;
}
