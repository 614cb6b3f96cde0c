// Inline SVG charts for the report: no scripts, no external resources.
import type { Bin, PhaseStats } from './report-stats.ts';
import { esc, num } from './report-html.ts';

const W = 640;
const H = 220;
const PAD = { left: 40, right: 12, top: 14, bottom: 40 };

export function histogramSvg(bins: Bin[], title = 'Reward distribution (unmasked rows)'): string {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const most = Math.max(1, ...bins.map((b) => b.count));
  const barW = plotW / Math.max(1, bins.length);
  const bars = bins.map((b, i) => {
    const h = (b.count / most) * plotH;
    const x = PAD.left + i * barW;
    const y = PAD.top + plotH - h;
    const label = `${num(b.lo, 2)}–${num(b.hi, 2)}: ${b.count}`;
    return `<g><title>${esc(label)}</title><rect class="bar" x="${num(x + 1, 2)}" y="${num(y, 2)}" width="${num(barW - 2, 2)}" height="${num(h, 2)}"/>`
      + (b.count ? `<text class="count" x="${num(x + barW / 2, 2)}" y="${num(y - 3, 2)}" text-anchor="middle">${b.count}</text>` : '')
      + `<text class="tick" x="${num(x + barW / 2, 2)}" y="${PAD.top + plotH + 14}" text-anchor="middle">${esc(num(b.lo, 2))}</text></g>`;
  }).join('');
  const axis = `<line class="axis" x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${W - PAD.right}" y2="${PAD.top + plotH}"/>`
    + `<line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}"/>`
    + `<text class="tick" x="${PAD.left - 6}" y="${PAD.top + 4}" text-anchor="end">${most}</text>`
    + `<text class="tick" x="${PAD.left - 6}" y="${PAD.top + plotH}" text-anchor="end">0</text>`
    + `<text class="label" x="${PAD.left + plotW / 2}" y="${H - 6}" text-anchor="middle">reward (bin lower edge)</text>`;
  return `<svg role="img" aria-label="${esc(title)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" class="chart">`
    + `<title>${esc(title)}</title>${axis}${bars}</svg>`;
}

/** Horizontal bars: mean seconds per phase, with the max as a thin line. */
export function timingsSvg(stats: PhaseStats[]): string {
  const rowH = 26;
  const labelW = 120;
  const h = PAD.top + stats.length * rowH + 10;
  const longest = Math.max(1e-9, ...stats.map((s) => s.max));
  const scale = (W - labelW - 170) / longest;
  const rows = stats.map((s, i) => {
    const y = PAD.top + i * rowH;
    return `<g><title>${esc(`${s.phase}: mean ${num(s.mean)} s, median ${num(s.median)} s, max ${num(s.max)} s`)}</title>`
      + `<text class="tick" x="${labelW - 8}" y="${y + 14}" text-anchor="end">${esc(s.phase)}</text>`
      + `<rect class="bar" x="${labelW}" y="${y + 3}" width="${num(Math.max(1, s.mean * scale), 2)}" height="14"/>`
      + `<line class="max" x1="${labelW}" y1="${y + 10}" x2="${num(labelW + s.max * scale, 2)}" y2="${y + 10}"/>`
      + `<text class="count" x="${num(labelW + s.max * scale + 6, 2)}" y="${y + 14}">mean ${esc(num(s.mean, 2))} s · max ${esc(num(s.max, 2))} s</text></g>`;
  }).join('');
  return `<svg role="img" aria-label="Mean seconds per phase" viewBox="0 0 ${W} ${h}" width="${W}" height="${h}" class="chart">`
    + `<title>Mean seconds per phase (line: max)</title>${rows}</svg>`;
}
