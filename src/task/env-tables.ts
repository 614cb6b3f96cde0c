// Every `${VAR}` a task's env tables read, checked before any sandbox starts (Task Folder Verifiers
// § Environment variables and secrets: "A missing required value fails the episode before any sandbox starts";
// docs/design.md section 7, Secrets: [secrets] fill `${NAME}` in [verifier].env and [steps.verifier].env only).
// Only names leave here: never a value.
import type { Task } from './model.ts';
import { resolveTemplates } from './template.ts';

export interface EnvTable {
  /** How the table is named in task.toml, e.g. `[verifier].env`. */
  readonly table: string;
  readonly env: Readonly<Record<string, string>>;
  /** berth.toml [secrets] fill its templates (over the worker's environment). */
  readonly secrets: boolean;
}

export interface UnsetVariable {
  readonly table: string;
  readonly key: string;
  readonly variable: string;
  readonly secrets: boolean;
}

/** The tables an episode templates; `[solution].env` only when the oracle runs. */
export function envTablesOf(task: Task, opts: { solution: boolean }): EnvTable[] {
  const tables: EnvTable[] = [
    { table: '[environment].env', env: task.environment.env, secrets: false },
    { table: '[verifier].env', env: task.verifier.env, secrets: true },
  ];
  for (const s of task.steps) {
    // A step's table holds [verifier].env under its own keys: only what the step sets is its own.
    const own = Object.fromEntries(Object.entries(s.verifier.env).filter(([k, v]) => task.verifier.env[k] !== v));
    tables.push({ table: `[steps.verifier].env of step "${s.name}"`, env: own, secrets: true });
  }
  // Each separate verifier's own sandbox env (a copy of [environment] is checked above already), once per table.
  const separate = [
    ...(task.verifier.mode === 'separate' ? [task.verifier] : []),
    ...task.steps.map((s) => s.verifier).filter((v) => v.mode === 'separate'),
  ];
  for (const v of separate) {
    if (!v.environment || !v.env_table || v.env_table === '[environment].env' || tables.some((t) => t.table === v.env_table)) continue;
    tables.push({ table: v.env_table, env: v.environment.env, secrets: false });
  }
  if (opts.solution) tables.push({ table: '[solution].env', env: task.solution.env, secrets: false });
  return tables;
}

/** The first `${VAR}` without a default that neither [secrets] (where they count) nor `hostEnv` sets, or null. */
export function firstUnsetVariable(
  tables: readonly EnvTable[],
  hostEnv: Readonly<Record<string, string | undefined>>,
  secrets: Readonly<Record<string, string>>,
): UnsetVariable | null {
  for (const t of tables) {
    const res = resolveTemplates(t.env, hostEnv, t.secrets ? secrets : {});
    if (!res.ok) return { table: t.table, key: res.key, variable: res.variable, secrets: t.secrets };
  }
  return null;
}

/**
 * What an episode never writes in clear (docs/design.md section 7 "Secrets"): the worker's [secrets], and every value `${VAR}`
 * resolved into [environment].env, which reaches every process in main (the agent's, test.sh's, the entrypoint's).
 * The verifier's own tables add theirs where they are resolved.
 */
export function episodeSecretValues(
  task: Task,
  hostEnv: Readonly<Record<string, string | undefined>>,
  secrets: Readonly<Record<string, string>>,
): string[] {
  const env = resolveTemplates(task.environment.env, hostEnv);
  return [...Object.values(secrets), ...(env.ok ? env.sensitive : [])];
}

export function unsetVariableMessage(u: UnsetVariable): string {
  const where = u.secrets ? 'set neither in [secrets] of berth.toml nor in the worker\'s environment' : 'not set in the worker\'s environment';
  return `${u.table} ${u.key} reads \${${u.variable}}, which is ${where}; set it there, or give it a default with \${${u.variable}:-value}`;
}
