// An ATIF trajectory rendered step by step for the episode page: messages, tool calls with their outputs,
// reasoning and per-step metrics. Everything is model or tool output: all of it goes through esc().
import type { AtifContentPart, AtifObservationResult, AtifStep, AtifToolCall, AtifTrajectory } from '../trajectory/atif-types.ts';
import { esc, num } from './report-html.ts';

/** Text past this many lines or characters is shown folded: its start, then the whole of it on demand. */
const FOLD_LINES = 14;
const FOLD_CHARS = 1500;
/** No single text on a page is longer than this; the rest stays in the file. */
const TEXT_MAX = 64 * 1024;

/** A block of preformatted text, folded when long (a <details> element: no script needed). */
export function folded(text: string, cls = ''): string {
  const capped = text.length > TEXT_MAX ? `${text.slice(0, TEXT_MAX)}\n… (${text.length - TEXT_MAX} more characters in the file)` : text;
  const lines = capped.split('\n');
  const pre = (t: string) => `<pre class="text${cls ? ` ${cls}` : ''}">${esc(t)}</pre>`;
  if (lines.length <= FOLD_LINES && capped.length <= FOLD_CHARS) return pre(capped);
  const head = lines.slice(0, FOLD_LINES).join('\n').slice(0, FOLD_CHARS);
  // The preview hides once the whole text is open (CSS :has); closed, only the preview and the summary show.
  return `<div class="fold">${pre(`${head}\n…`).replace('<pre', '<pre data-preview')}<details><summary>show all ${lines.length} lines (${capped.length} characters)</summary>${pre(capped)}</details></div>`;
}

function contentText(content: string | AtifContentPart[] | null | undefined): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : `[image ${p.source.media_type}: ${p.source.path}]`)).join('\n');
}

function argumentsText(args: Record<string, unknown>): string {
  // A shell tool's one argument reads best as the command itself.
  const keys = Object.keys(args);
  if (keys.length === 1 && typeof args[keys[0]!] === 'string') return String(args[keys[0]!]);
  return JSON.stringify(args, null, 2);
}

function toolCall(call: AtifToolCall, results: AtifObservationResult[]): string {
  const out = results.filter((r) => r.source_call_id === call.tool_call_id);
  const outputs = out.length
    ? out.map((r) => `<div class="label">output</div>${folded(contentText(r.content), 'output')}`).join('')
    : '<div class="label">output</div><p class="empty">no output recorded</p>';
  return `<div class="call"><div class="call-head">tool call <code>${esc(call.function_name)}</code> <span class="note">${esc(call.tool_call_id)}</span></div>
<div class="label">arguments</div>${folded(argumentsText(call.arguments ?? {}), 'args')}${outputs}</div>`;
}

function metricsLine(step: AtifStep): string {
  const m = step.metrics;
  if (!m) return '';
  const parts = [
    m.prompt_tokens !== undefined ? `${m.prompt_tokens} prompt tokens` : '',
    m.completion_tokens !== undefined ? `${m.completion_tokens} completion tokens` : '',
    m.cached_tokens ? `${m.cached_tokens} cached` : '',
    m.cost_usd !== undefined ? `$${num(m.cost_usd, 6)}` : '',
  ].filter(Boolean);
  return parts.length ? `<div class="note">${esc(parts.join(' · '))}</div>` : '';
}

function stepHtml(step: AtifStep): string {
  const results = step.observation?.results ?? [];
  const calls = step.tool_calls ?? [];
  const callIds = new Set(calls.map((c) => c.tool_call_id));
  const message = contentText(step.message);
  const head = [`#${step.step_id}`, step.source, step.model_name ?? '', step.timestamp ?? ''].filter(Boolean).map(esc).join(' · ');
  // Observations tied to no call of this step (e.g. a user step's input) still show.
  const loose = results.filter((r) => !r.source_call_id || !callIds.has(r.source_call_id));
  return `<article class="step src-${esc(step.source)}" id="step-${esc(step.step_id)}">
<div class="step-head">${head}</div>
${message ? folded(message, 'message') : calls.length ? '' : '<p class="empty">empty message</p>'}
${step.reasoning_content ? `<details class="reasoning"><summary>reasoning</summary>${folded(step.reasoning_content)}</details>` : ''}
${calls.map((c) => toolCall(c, results)).join('\n')}
${loose.map((r) => `<div class="label">observation</div>${folded(contentText(r.content), 'output')}`).join('')}
${metricsLine(step)}
</article>`;
}

export function trajectoryHtml(t: AtifTrajectory): string {
  const agent = [t.agent?.name, t.agent?.version, t.agent?.model_name].filter(Boolean).map(esc).join(' · ');
  const steps = Array.isArray(t.steps) ? t.steps : [];
  return `<p class="note">agent ${agent} · ${steps.length} steps · ${esc(t.schema_version)}</p>
<div class="steps">${steps.map(stepHtml).join('\n')}</div>`;
}
