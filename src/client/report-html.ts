// Escaping and number formatting for the HTML report. Everything that comes from rows goes through esc().

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const esc = (value: unknown): string => String(value ?? '').replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);

/** A number for people: '-' when there is none, otherwise at most `digits` decimals without trailing zeros. */
export function num(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  return String(Number(value.toFixed(digits)));
}

/** Long failure reasons are cut for the table; the full text stays in rollouts.jsonl. */
export function clip(text: string, max = 400): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

export type TableRow = string[] | { cls: string; cells: string[]; attrs?: Record<string, string> };

/** A table from pre-escaped cells. */
export function htmlTable(headers: string[], rows: TableRow[], cls = ''): string {
  const head = headers.map((h) => `<th>${h}</th>`).join('');
  const tr = (r: TableRow) => {
    const attrs = Array.isArray(r) ? '' : Object.entries(r.attrs ?? {}).map(([k, v]) => ` ${k}="${esc(v)}"`).join('');
    const [cells, rowCls] = Array.isArray(r) ? [r, ''] : [r.cells, ` class="${r.cls}"${attrs}`];
    return `<tr${rowCls}>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  };
  const body = rows.map(tr).join('\n');
  // Many repeats make wide tables: they scroll sideways instead of stretching the page.
  return `<div class="scroll"><table${cls ? ` class="${cls}"` : ''}><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

// Blocks every fetch and script even if something slipped past escaping.
const CSP = "default-src 'none'; style-src 'unsafe-inline'";

/** A whole page of the report's file set: inline CSS, no scripts, nothing fetched at view time. */
export function htmlPage(title: string, body: string, css: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${css}</style>
</head>
<body>
${body}
</body>
</html>
`;
}
