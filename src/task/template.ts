// `${VAR}` / `${VAR:-default}` templating of whole env values (Task Folder Format § Environment:
// "A whole value `${NAME}` or `${NAME:-default}` is read from the server's host"). Resolved at seed time by the layer
// that has the host environment; the loader keeps the raw strings. The one resolver of every env table: the
// environment's, the solution's, the verifiers' (with [secrets]), and the planner's check for an unset variable.

const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([\s\S]*))?\}$/;

/** Host values shorter than this are not redacted: hiding every "1" or "64" would mangle logs, not protect them. */
export const MIN_REDACTED_HOST_VALUE = 4;

/** The variable a whole-value template reads, or null when the value is a literal. */
export function templateVariable(value: string): { name: string; fallback: string | null } | null {
  const m = WHOLE.exec(value);
  if (!m) return null;
  return { name: m[1]!, fallback: m[2] ?? null };
}

const own = (source: Readonly<Record<string, string | undefined>>, name: string): string | undefined =>
  Object.prototype.hasOwnProperty.call(source, name) ? source[name] : undefined;

export type ResolvedTemplates =
  | { ok: true; values: Record<string, string>; sensitive: string[] }
  | { ok: false; key: string; variable: string };

/**
 * Resolves every whole-value template of `table`; other values are literal. `secrets` ([secrets] of berth.toml, given
 * only where they count: docs/design.md section 7 "Secrets") win over `hostEnv`. `${NAME:-d}` takes `d` when NAME is unset or
 * empty; an unset `${NAME}` stops with the key and the variable. `sensitive` lists the values Berth must never write in
 * clear (docs/design.md section 7 "Secrets"): every value read from [secrets], and every value read from the host of at least
 * MIN_REDACTED_HOST_VALUE characters; a default written in task.toml is not a secret.
 */
export function resolveTemplates(
  table: Readonly<Record<string, string>>,
  hostEnv: Readonly<Record<string, string | undefined>>,
  secrets: Readonly<Record<string, string>> = {},
): ResolvedTemplates {
  const values: Record<string, string> = {};
  const sensitive: string[] = [];
  for (const [key, raw] of Object.entries(table)) {
    const t = templateVariable(raw);
    if (t === null) {
      values[key] = raw;
      continue;
    }
    const secret = own(secrets, t.name);
    const found = secret ?? own(hostEnv, t.name);
    if (found === undefined || (found === '' && t.fallback !== null)) {
      if (t.fallback === null) return { ok: false, key, variable: t.name };
      values[key] = t.fallback;
      continue;
    }
    values[key] = found;
    if (found !== '' && (secret !== undefined || found.length >= MIN_REDACTED_HOST_VALUE)) sensitive.push(found);
  }
  return { ok: true, values, sensitive };
}
