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
a { color: #2456c7; }
nav { margin-bottom: 12px; }
h3 { font-size: 14px; margin: 18px 0 6px; }
.filters { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 6px; margin: 6px 0; }
.filters .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; min-width: 96px; }
.filters input { position: absolute; opacity: 0; pointer-events: none; }
.filters label { border: 1px solid var(--line); border-radius: 12px; padding: 1px 10px; cursor: pointer; background: var(--bg); }
.filters input:checked + label { background: var(--bar); border-color: var(--bar); color: #fff; }
.filters input:checked + label .note { color: #e6ecff; }
.filters input:focus-visible + label { outline: 2px solid var(--fg); }
.failure { border-left: 4px solid var(--bad); background: #fff5f5; padding: 8px 12px; margin: 12px 0; }
pre.text { margin: 4px 0; padding: 8px 10px; background: var(--panel); border: 1px solid var(--line); border-radius: 4px;
  font: 12px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-word; max-width: 100%; }
pre.output { background: #0f1720; color: #dce3ea; border-color: #0f1720; }
.fold:has(details[open]) > pre[data-preview] { display: none; }
.fold summary, details.reasoning summary { cursor: pointer; color: #2456c7; font-size: 12px; margin: 2px 0 6px; }
.steps { display: flex; flex-direction: column; gap: 10px; max-width: 1100px; }
.step { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px; padding: 8px 12px; }
.step.src-system { border-left-color: #8a94a3; } .step.src-user { border-left-color: #1a7f37; } .step.src-agent { border-left-color: var(--bar); }
.step-head { font-size: 12px; font-weight: 600; color: var(--muted); text-transform: none; margin-bottom: 4px; }
.call { margin: 6px 0 2px; padding: 6px 10px; background: #fbfcfd; border: 1px dashed var(--line); border-radius: 4px; }
.call-head { font-size: 12px; margin-bottom: 2px; }
.label { color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .04em; margin-top: 6px; }
.turn { margin-top: 28px; }
.facts { display: flex; flex-wrap: wrap; gap: 0 40px; align-items: flex-start; }
.facts > section { min-width: 220px; }
`;
