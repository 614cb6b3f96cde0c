// Legacy task.toml spellings, normalised before validation the way Harbor 0.22.0 reads them
// (reference/harbor-behaviour.md section 1, "Legacy keys"; spec/multi-step-tasks.md § Legacy keys accepted).
import { refuse } from './errors.ts';
import { TASK_LAYOUT } from './layout.ts';
import { isTable, type Table } from './table.ts';


const UNIT_FACTORS: Record<string, number> = { g: 1024, m: 1, k: 1 / 1024 };

/** `"2G"` → 2048, `"512M"` → 512, `"1024K"` → 1 (MiB, rounded up); null when the text has no known unit. */
export function parseSizeToMb(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([GgMmKk])(?:i?[Bb])?\s*$/.exec(text);
  if (!m) return null;
  const factor = UNIT_FACTORS[m[2]!.toLowerCase()]!;
  const mb = Math.ceil(Number(m[1]) * factor);
  return mb > 0 ? mb : null;
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
  if (mb === null) {
    refuse({
      code: 'invalid_value',
      file: TASK_LAYOUT.taskToml,
      key: `${tablePath}.${legacy}`,
      value,
      problem: 'the size has no G, M or K unit Harbor reads',
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
    // multi-step-tasks.md § Legacy keys accepted: "aggregate" (the MemoryArena adapters') is dropped silently.
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
