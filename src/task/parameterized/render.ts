// Rendering one template file with a row's fields (NeMo Gym 0.7, Parameterized):
// `<stem>.template<suffix>` becomes `<stem><suffix>`, and each `{{ task_data.x }}` or `{{ x }}` in it the field's
// value. Only plain field references are understood; anything else between `{{ }}` is refused, never left as is.

const TEMPLATE_NAME = /^(.+)\.template((?:\.[^/]*)?)$/;
const PLACEHOLDER = /\{\{(.*?)\}\}/g;
const FIELD_PATH = /^(?:task_data\.)?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$/;

/** `solution/solve.template.sh` → `solution/solve.sh`; null for a file that is not a template. */
export function renderedName(rel: string): string | null {
  const slash = rel.lastIndexOf('/');
  const m = TEMPLATE_NAME.exec(rel.slice(slash + 1));
  return m ? `${rel.slice(0, slash + 1)}${m[1]}${m[2]}` : null;
}

/** A value as Jinja's `{{ }}` prints it (Python's str): True, False, None; objects and lists as JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (value === null) return 'None';
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value);
}

export type RenderResult = { ok: true; text: string } | { ok: false; placeholder: string; problem: string; fix: string };

function lookup(fields: Record<string, unknown>, path: string): { found: boolean; value?: unknown } {
  let cur: unknown = fields;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur) || !Object.hasOwn(cur, part)) return { found: false };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { found: true, value: cur };
}

/** The text with every placeholder filled in from `fields`, or the first placeholder that cannot be. */
export function renderText(text: string, fields: Record<string, unknown>): RenderResult {
  let failure: RenderResult | null = null;
  const out = text.replace(PLACEHOLDER, (whole, inner: string) => {
    if (failure) return whole;
    const expr = inner.trim();
    const m = FIELD_PATH.exec(expr);
    if (!m) {
      failure = { ok: false, placeholder: whole, problem: `"${whole}" is not a field reference`, fix: 'write {{ name }} or {{ task_data.name }} (filters and expressions are not rendered)' };
      return whole;
    }
    const hit = lookup(fields, m[1]!);
    if (!hit.found) {
      failure = { ok: false, placeholder: whole, problem: `the row has no field "${m[1]}" for "${whole}"`, fix: `add "${m[1]}" to the row's fields, or remove the placeholder` };
      return whole;
    }
    return formatValue(hit.value);
  });
  return failure ?? { ok: true, text: out };
}
