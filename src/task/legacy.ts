// Legacy task.toml spellings, normalised before validation the way Harbor 0.22.0 reads them
// (Harbor 0.25 section 1, "Legacy keys"; Multi-Step Harbor Tasks § Legacy keys accepted).
import { refuse } from './errors.ts';
import { TASK_LAYOUT } from './layout.ts';
import { isTable, type Table } from './table.ts';


const UNIT_FACTORS: Record<string, number> = { G: 1024, M: 1, K: 1 / 1024 };
/** A number as Python's float() reads one (underscores between digits; no inf or nan, which Harbor cannot size). */
const PY_FLOAT = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;

/**
 * A legacy size in MiB as Harbor converts it (its EnvironmentConfig._parse_size_to_mb): upper-cased, a trailing G, M
 * or K only (no GB, no Gi), the number read as a float and the product truncated: `"2G"` → 2048, `"1.9G"` → 1945,
 * `"1536K"` → 1, `"512K"` → 0. Null when Harbor refuses the text.
 */
export function parseSizeToMb(text: string): number | null {
  const upper = text.trim().toUpperCase();
  const factor = UNIT_FACTORS[upper.slice(-1)];
  const number = upper.slice(0, -1).trim();
  if (factor === undefined || !PY_FLOAT.test(number)) return null;
  return Math.trunc(Number(number.replace(/_/g, '')) * factor);
}

function normaliseSize(env: Table, legacy: 'memory' | 'storage', tablePath: string, warn: (m: string) => void): void {
  if (!(legacy in env)) return;
  const value = env[legacy];
  const modern = `${legacy}_mb`;
  delete env[legacy];
  if (typeof value !== 'string') {
    warn(`task.toml: ${tablePath}.${legacy} = ${JSON.stringify(value)} is not a size string such as "2G"; ignored (Harbor drops it too). Use ${modern}.`);
    return;
  }
  const mb = parseSizeToMb(value);
  if (mb === null || mb < 0) {
    refuse({
      code: 'invalid_value',
      file: TASK_LAYOUT.taskToml,
      key: `${tablePath}.${legacy}`,
      value,
      problem: mb === null ? 'the size is not a number with a G, M or K unit, the only units Harbor reads (no GB or Gi)' : 'the size is negative',
      fix: `write ${tablePath}.${modern} = <MiB> (or a size like "2G")`,
    });
  }
  if (modern in env && env[modern] !== mb) {
    refuse({
      code: 'invalid_value',
      file: TASK_LAYOUT.taskToml,
      key: `${tablePath}.${legacy}`,
      value,
      problem: `it conflicts with ${tablePath}.${modern} = ${JSON.stringify(env[modern])}`,
      fix: `keep only ${tablePath}.${modern}`,
    });
  }
  if (mb === 0) {
    // Harbor keeps 0 MiB, which sets no limit (Docker's 0 is unlimited): Berth's unset value says the same.
    if (!(modern in env)) warn(`task.toml: ${tablePath}.${legacy} = ${JSON.stringify(value)} is less than 1 MiB once truncated as Harbor converts it: no limit. Use ${modern}.`);
    return;
  }
  env[modern] = mb;
}

function normaliseAllowInternet(env: Table): void {
  if (!('allow_internet' in env)) return;
  const allow = env.allow_internet;
  delete env.allow_internet;
  if (env.network_mode !== undefined || env.allowed_hosts !== undefined) return;
  if (allow === true) env.network_mode = 'public';
  else if (allow === false) env.network_mode = 'no-network';
}

function normaliseEnvironment(env: unknown, tablePath: string, warn: (m: string) => void): void {
  if (!isTable(env)) return;
  normaliseSize(env, 'memory', tablePath, warn);
  normaliseSize(env, 'storage', tablePath, warn);
  normaliseAllowInternet(env);
}

/**
 * Rewrites legacy spellings in place: `version` → `schema_version`, `memory`/`storage` strings →
 * `*_mb`, `allow_internet` → `network_mode`, and drops `multi_step_reward_mode` (with a warning unless it is "aggregate").
 */
export function normaliseLegacy(doc: Table, warn: (message: string) => void): void {
  if ('version' in doc) {
    if (doc.schema_version === undefined) doc.schema_version = doc.version;
    delete doc.version;
  }
  if ('multi_step_reward_mode' in doc) {
    const value = doc.multi_step_reward_mode;
    delete doc.multi_step_reward_mode;
    // Multi-Step Harbor Tasks § Legacy keys accepted: "aggregate" (the MemoryArena adapters') is dropped silently.
    if (value !== 'aggregate') warn(
      `task.toml: multi_step_reward_mode = ${JSON.stringify(value)} is a pre-1.3 key Harbor does not have; dropped ` +
        `(the task rolls up with multi_step_reward_strategy, default "mean"). Remove it, or set multi_step_reward_strategy.`,
    );
  }
  normaliseEnvironment(doc.environment, 'environment', warn);
  if (isTable(doc.verifier)) normaliseEnvironment(doc.verifier.environment, 'verifier.environment', warn);
  if (Array.isArray(doc.steps)) {
    doc.steps.forEach((step, i) => {
      if (isTable(step) && isTable(step.verifier)) {
        normaliseEnvironment(step.verifier.environment, `steps[${i}].verifier.environment`, warn);
      }
    });
  }
}
