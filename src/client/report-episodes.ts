// The batch page's episode list: one line per reported row, each linking to its episode page, filtered by outcome
// and failure kind with radio buttons and CSS :has() (the page runs no script).
import type { ResultRow } from '../workflows/types.ts';
import { esc, htmlTable, num } from './report-html.ts';
import { outcomeOf } from './report-episode.ts';
import { episodePagePath } from './report-paths.ts';
import { isSuccess } from './report-stats.ts';

const OUTCOMES = [
  { id: 'all', label: 'all', token: null },
  { id: 'scored', label: 'scored', token: 'scored' },
  { id: 'masked', label: 'masked', token: 'masked' },
  { id: 'solved', label: 'solved (reward ≥ 1)', token: 'solved' },
  { id: 'unsolved', label: 'scored, not solved', token: 'unsolved' },
] as const;

const tokensOf = (r: ResultRow): string[] => (r.mask_sample ? ['masked'] : ['scored', isSuccess(r) ? 'solved' : 'unsolved']);

function radio(group: string, id: string, label: string, count: number, checked: boolean): string {
  return `<input type="radio" name="${group}" id="${id}"${checked ? ' checked' : ''}><label for="${id}">${esc(label)} <span class="note">${count}</span></label>`;
}

export function episodesSection(rows: ResultRow[], opts: { pages: boolean }): string {
  if (!rows.length) return '<section id="episodes"><h2>Episodes</h2><p class="empty">No rows.</p></section>';
  const kinds = [...new Set(rows.map((r) => r.failure_kind).filter((k): k is string => Boolean(k)))].sort();
  // Kinds are arbitrary text: the markup and the CSS name them by index only.
  const kindKey = (r: ResultRow) => (r.failure_kind ? `k${kinds.indexOf(r.failure_kind)}` : 'none');
  const outcomeRadios = OUTCOMES.map((o) => radio('outcome', `fo-${o.id}`, o.label,
    o.token ? rows.filter((r) => tokensOf(r).includes(o.token)).length : rows.length, o.id === 'all')).join('');
  const kindRadios = [
    radio('kind', 'fk-any', 'any', rows.length, true),
    radio('kind', 'fk-none', 'none', rows.filter((r) => !r.failure_kind).length, false),
    ...kinds.map((k, i) => radio('kind', `fk-k${i}`, k, rows.filter((r) => r.failure_kind === k).length, false)),
  ].join('');
  const hide = (when: string, keep: string) => `body:has(#${when}:checked) #episode-list tbody tr:not(${keep}) { display: none; }`;
  const css = [
    ...OUTCOMES.filter((o) => o.token).map((o) => hide(`fo-${o.id}`, `[data-outcome~="${o.token}"]`)),
    hide('fk-none', '[data-kind="none"]'),
    ...kinds.map((_, i) => hide(`fk-k${i}`, `[data-kind="k${i}"]`)),
  ].join('\n');
  const table = htmlTable(['task', 'repeat', 'attempt', 'outcome', 'reward', 'failure kind', 'episode'], rows.map((r) => {
    const o = outcomeOf(r);
    const page = episodePagePath(r);
    return {
      cls: 'ep',
      attrs: { 'data-outcome': tokensOf(r).join(' '), 'data-kind': kindKey(r) },
      cells: [
        esc(r.task_id), String(r.repeat), `${r.attempt}${r.regraded_from ? ' <span class="note">regrade</span>' : ''}`,
        `<span class="${o.cls}">${esc(o.label)}</span>`, r.mask_sample ? '<span class="mask">masked</span>' : esc(num(r.reward)),
        r.failure_kind ? `<code>${esc(r.failure_kind)}</code>` : '',
        opts.pages ? `<a href="${esc(page)}">view</a>` : '',
      ],
    };
  }), 'episode-list');
  return `<section id="episodes"><h2>Episodes</h2>
<style>${css}</style>
<div class="filters" id="filter-outcome"><span class="k">outcome</span>${outcomeRadios}</div>
<div class="filters" id="filter-kind"><span class="k">failure kind</span>${kindRadios}</div>
<div id="episode-list">${table}</div></section>`;
}
