// The report's inline stylesheet (the file must render with no network).
export const REPORT_CSS = `
:root { color-scheme: light; --fg: #1d2430; --muted: #5b6573; --line: #d8dde4; --bg: #fff; --panel: #f6f8fa;
  --ok: #1a7f37; --bad: #cf222e; --mask: #8c6d00; --partial: #9a6700; --bar: #4a6fd1; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 4px; word-break: break-all; }
h2 { font-size: 17px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
.sub { color: var(--muted); margin: 0 0 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; min-width: 120px; }
.card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; margin: 6px 0; }
.scroll { overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.overall td { font-weight: 600; background: var(--panel); }
.ok { color: var(--ok); } .bad { color: var(--bad); } .partial { color: var(--partial); } .mask { color: var(--mask); font-style: italic; }
.reason { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; white-space: pre-wrap; word-break: break-word; max-width: 640px; }
.empty { color: var(--muted); font-style: italic; }
.chart .bar { fill: var(--bar); } .chart .axis { stroke: var(--muted); } .chart .max { stroke: var(--fg); stroke-width: 1.5; }
.chart .tick, .chart .count, .chart .label { font-size: 11px; fill: var(--muted); }
.note { color: var(--muted); font-size: 12px; }
`;
