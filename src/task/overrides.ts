// [gym.tasks."id"] overrides, merged into the task.toml document before validation
// (Task Folder Format § [gym.tasks."task-id"]): `env` merges over the task's own,
// `verifier.environment` merges field by field (or is created, selecting separate mode),
// `artifacts` appends, every other key replaces.
import type { TaskOverride } from './schema.ts';
import { isTable, type Table } from './table.ts';


function mergeWithEnv(base: unknown, over: Table): Table {
  const b = isTable(base) ? base : {};
  const out: Table = { ...b, ...over };
  if ('env' in over) {
    // A non-table value is kept as is, so validation names it.
    out.env = isTable(over.env) ? { ...(isTable(b.env) ? b.env : {}), ...over.env } : over.env;
  }
  return out;
}

export function mergeOverride(doc: Table, override: TaskOverride | undefined): Table {
  if (!override) return doc;
  const out: Table = { ...doc };
  if (override.environment) out.environment = mergeWithEnv(doc.environment, override.environment);
  if (override.verifier) {
    const { environment, ...rest } = override.verifier;
    const v = mergeWithEnv(doc.verifier, rest);
    if (environment !== undefined) {
      v.environment = isTable(environment)
        ? mergeWithEnv(isTable(doc.verifier) ? doc.verifier.environment : undefined, environment)
        : environment;
    }
    out.verifier = v;
  }
  if (override.artifacts) out.artifacts = [...(Array.isArray(doc.artifacts) ? doc.artifacts : []), ...override.artifacts];
  return out;
}

/** Whether the override sets anything at `path` (so a validation error there is the override's). */
export function overrideHas(override: TaskOverride | undefined, path: readonly PropertyKey[]): boolean {
  if (!override) return false;
  let cur: unknown = override;
  for (const [i, seg] of path.entries()) {
    if (seg === 'artifacts' && i === 0) return Array.isArray(override.artifacts);
    if (!isTable(cur) && !Array.isArray(cur)) return false;
    cur = (cur as any)[seg as any];
    if (cur === undefined) return false;
  }
  return true;
}
