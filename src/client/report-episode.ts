// One episode's page in the report's file set: what it scored and why, its trajectory step by step, the verifier's
// output and reward files, timings per phase, usage and cost, and where to look in the Temporal UI. Pure.
import type { ResultRow } from '../workflows/types.ts';
import type { EpisodeFiles, FileText, TurnFiles } from './episode-files.ts';
import { esc, htmlPage, htmlTable, num } from './report-html.ts';
import { episodePagePath } from './report-paths.ts';
import { isSuccess } from './report-stats.ts';
import { REPORT_CSS } from './report-style.ts';
import { folded, trajectoryHtml } from './report-trajectory.ts';
import { SANDBOX_LAYOUT } from '../task/index.ts';

export interface EpisodePageOptions {
  batchId: string;
  /** The batch page, relative to the episodes/ folder. */
  batchPage: string;
  /** The run's page in the Temporal UI. */
  uiLink: string;
  /** Every attempt of the same (task, repeat) in the results, this one included. */
  attempts: ResultRow[];
}

/** scored or masked, and whether it solved the task (reward ≥ 1). */
export function outcomeOf(row: ResultRow): { outcome: 'scored' | 'masked'; label: string; cls: string } {
  if (row.mask_sample) return { outcome: 'masked', label: 'masked', cls: 'mask' };
  if (isSuccess(row)) return { outcome: 'scored', label: 'scored · solved', cls: 'ok' };
  return { outcome: 'scored', label: 'scored · not solved', cls: (row.reward ?? 0) > 0 ? 'partial' : 'bad' };
}

const card = (key: string, value: string, id: string): string =>
  `<div class="card" id="${id}"><div class="k">${esc(key)}</div><div class="v">${value}</div></div>`;

function keyValues(values: Record<string, unknown> | undefined, digits = 3): string {
  const entries = Object.entries(values ?? {});
  if (!entries.length) return '<span class="empty">none</span>';
  return htmlTable(['key', 'value'], entries.map(([k, v]) => [esc(k), esc(typeof v === 'number' ? num(v, digits) : JSON.stringify(v))]));
}

function headerSection(row: ResultRow, opts: EpisodePageOptions): string {
  const o = outcomeOf(row);
  const regraded = row.regraded_from ? `<p>regrade of <code>${esc(row.regraded_from)}</code>: the verifier ran again on the kept state; the agent did not run.</p>` : '';
  const failure = row.failure_kind
    ? `<div class="failure"><div>failure kind <code>${esc(row.failure_kind)}</code> · ${row.mask_sample ? 'masked: not in the score' : 'scored 0: counts in the score'}</div>${row.failure_reason ? folded(row.failure_reason, 'reason') : ''}</div>`
    : '';
  return `<nav><a href="${esc(opts.batchPage)}">← batch ${esc(opts.batchId)}</a></nav>
<header>
<h1>${esc(row.task_id)} · repeat ${esc(row.repeat)} · attempt ${esc(row.attempt)}</h1>
<p class="sub"><code>${esc(row.workflow_id)}</code> · <a href="${esc(opts.uiLink)}">open in the Temporal UI</a>${row.host ? ` · host <b>${esc(row.host)}</b>` : ''}${row.verifier_mode ? ` · ${esc(row.verifier_mode)} verifier` : ''}</p>
<div class="cards">
${card('outcome', `<span class="${o.cls}">${esc(o.label)}</span>`, 'card-outcome')}
${card('reward', row.mask_sample ? '<span class="mask">masked</span>' : esc(num(row.reward)), 'card-reward')}
${card('turns', String(row.turns.length), 'card-turns')}
${row.stopped_after_turn !== null ? card('stopped after turn', String(row.stopped_after_turn), 'card-stopped') : ''}
</div>
${failure}${regraded}
</header>`;
}

function rewardsSection(row: ResultRow): string {
  const turns = row.turns.length > 1
    ? htmlTable(['turn', 'step', 'reward', 'failure kind'], row.turns.map((t, i) => [
      `<a href="#turn-${i + 1}">${i + 1}</a>`, esc(t.step), esc(num(t.reward)), t.failure_kind ? `<code>${esc(t.failure_kind)}</code>` : '',
    ]))
    : '';
  const components = row.reward_components ? `<h3>reward components</h3>${keyValues(row.reward_components)}` : '';
  return `<section id="rewards"><h2>Rewards</h2><h3>verifier rewards</h3>${keyValues(row.verifier_rewards)}${components}${turns}</section>`;
}

/** Usage and cost as the agent reported them: the row's `usage` (any keys) and the trajectories' final metrics. */
function usageSection(row: ResultRow, files: EpisodeFiles): string {
  const usage = (row as { usage?: Record<string, unknown> }).usage;
  const finals = files.turns.map((t) => t.trajectory?.final_metrics).filter((m) => m && Object.keys(m).length);
  if (!usage && !finals.length) return '<section id="usage"><h2>Usage and cost</h2><p class="empty">The agent reported no usage.</p></section>';
  const totals: Record<string, number> = {};
  for (const m of finals) for (const [k, v] of Object.entries(m!)) if (typeof v === 'number') totals[k] = (totals[k] ?? 0) + v;
  return `<section id="usage"><h2>Usage and cost</h2>
${usage ? `<h3>row usage</h3>${keyValues(usage, 6)}` : ''}
${finals.length ? `<h3>trajectory final metrics (all turns)</h3>${keyValues(totals, 6)}` : ''}</section>`;
}

function timingsSection(row: ResultRow): string {
  const entries = Object.entries(row.timings ?? {}).filter(([, v]) => typeof v === 'number');
  if (!entries.length) return '<section id="phase-timings"><h2>Timings</h2><p class="empty">No timings recorded.</p></section>';
  const total = entries.reduce((s, [, v]) => s + v, 0);
  return `<section id="phase-timings"><h2>Timings</h2>${htmlTable(['phase', 'seconds'], [
    ...entries.map(([k, v]) => [esc(k), esc(num(v, 2))]),
    { cls: 'overall', cells: ['total', esc(num(total, 2))] },
  ])}</section>`;
}

const fileBlock = (f: FileText): string =>
  `<div class="file"><div class="label"><code>${esc(f.name)}</code>${f.omittedBytes ? ` <span class="note">(its last part; ${f.omittedBytes} bytes before it are in the file)</span>` : ''}</div>${folded(f.text, 'output')}</div>`;

function turnSection(turn: TurnFiles, row: ResultRow): string {
  const summary = row.turns[turn.turn - 1];
  const head = summary ? ` · ${esc(summary.step)} · reward ${esc(num(summary.reward))}${summary.failure_kind ? ` · <code>${esc(summary.failure_kind)}</code>` : ''}` : '';
  const trajectory = turn.trajectory ? trajectoryHtml(turn.trajectory) : `<p class="empty">${esc(turn.trajectoryProblem ?? 'no trajectory')}</p>`;
  const output = turn.verifierOutput.length ? turn.verifierOutput.map(fileBlock).join('') : '<p class="empty">The verifier left no test-stdout.txt.</p>';
  const rewards = turn.rewardFiles.length ? turn.rewardFiles.map(fileBlock).join('') : '<p class="empty">No reward file.</p>';
  const others = turn.otherVerifierFiles.length ? `<p class="note">also in ${SANDBOX_LAYOUT.verifierLogs}: ${turn.otherVerifierFiles.map((n) => `<code>${esc(n)}</code>`).join(' ')}</p>` : '';
  return `<section class="turn" id="turn-${turn.turn}"><h2>Turn ${turn.turn}${head}</h2>
<h3>Trajectory</h3>${trajectory}
<h3>Verifier output</h3><div class="verifier-output">${output}</div>
<h3>Reward files</h3><div class="reward-files">${rewards}</div>${others}</section>`;
}

function attemptsSection(row: ResultRow, attempts: ResultRow[]): string {
  if (attempts.length < 2) return '';
  const items = [...attempts].sort((a, b) => a.attempt - b.attempt).map((a) => {
    const text = `attempt ${a.attempt}${a.regraded_from ? ' (regrade)' : ''}: ${a.mask_sample ? 'masked' : `reward ${num(a.reward)}`}`;
    return a.workflow_id === row.workflow_id ? `<li><b>${esc(text)}</b> (this page)</li>` : `<li><a href="${esc(episodePagePath(a).replace(/^episodes\//, ''))}">${esc(text)}</a></li>`;
  });
  return `<section id="attempts"><h2>Attempts</h2><p class="note">The newest attempt is the one reported.</p><ul>${items.join('')}</ul></section>`;
}

export function renderEpisodePage(row: ResultRow, files: EpisodeFiles, opts: EpisodePageOptions): string {
  const turns = files.problem
    ? `<section id="logs"><h2>Logs</h2><p class="empty">${esc(files.problem)}</p></section>`
    : files.turns.map((t) => turnSection(t, row)).join('\n') || '<section id="logs"><h2>Logs</h2><p class="empty">No turn folder in the logs.</p></section>';
  const body = [
    headerSection(row, opts),
    `<div class="facts">${rewardsSection(row)}${timingsSection(row)}${usageSection(row, files)}</div>`,
    attemptsSection(row, opts.attempts), turns,
    files.logsDir ? `<p class="note">logs folder <code>${esc(files.logsDir)}</code></p>` : '',
  ].join('\n');
  return htmlPage(`${row.task_id} #${row.repeat} · Berth`, body, REPORT_CSS);
}
