// `${VAR}` / `${VAR:-default}` templating of whole env values (spec/task-folder-format.md § Environment:
// "A whole value `${NAME}` or `${NAME:-default}` is read from the server's host"). Resolved at seed time
// by the layer that has the host environment; the loader keeps the raw strings.

const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?\}$/;

export type TemplateResult = { values: Record<string, string> } | { missing: string; key: string };

/** The variable a whole-value template reads, or null when the value is a literal. */
export function templateVariable(value: string): { name: string; fallback: string | null } | null {
  const m = WHOLE.exec(value);
  if (!m) return null;
  return { name: m[1]!, fallback: m[2] ?? null };
}

/**
 * Resolves every whole-value template of `table` against `env` (first source wins when `env` is a
 * list, e.g. `[secrets, process.env]`). `${NAME:-d}` takes `d` when NAME is unset or empty; an unset
 * `${NAME}` stops with `{ missing: NAME, key }`. Other values are literal.
 */
export function templateEnv(
  table: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>> | ReadonlyArray<Readonly<Record<string, string | undefined>>>,
): TemplateResult {
  const sources = Array.isArray(env) ? env : [env as Readonly<Record<string, string | undefined>>];
  const lookup = (name: string): string | undefined => {
    for (const s of sources) {
      const v = s[name];
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const values: Record<string, string> = {};
  for (const [key, raw] of Object.entries(table)) {
    const t = templateVariable(raw);
    if (t === null) {
      values[key] = raw;
      continue;
    }
    const found = lookup(t.name);
    if (t.fallback !== null) values[key] = found === undefined || found === '' ? t.fallback : found;
    else if (found === undefined) return { missing: t.name, key };
    else values[key] = found;
  }
  return { values };
}

/** Names of the variables a table reads (for messages and secret redaction). */
export function templateNames(table: Readonly<Record<string, string>>): string[] {
  const names: string[] = [];
  for (const raw of Object.values(table)) {
    const t = templateVariable(raw);
    if (t) names.push(t.name);
  }
  return names;
}
