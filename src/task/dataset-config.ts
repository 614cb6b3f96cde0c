// dataset.toml: Harbor's [dataset] and [[tasks]] are tolerated; Gym's [gym] table is complete and
// strict (Task Folder Format § Dataset settings). Problems here stop the command.
import { parse as parseToml, TomlError } from 'smol-toml';
import { DatasetRefusal } from './errors.ts';
import { artifactSchema, environmentSchema, gymSchema, TASK_OVERRIDE_KEYS, verifierSchema, type TaskOverride } from './schema.ts';
import { DATASET_LAYOUT } from './layout.ts';
import { isTable } from './table.ts';
import { unknownKeys } from './unknown-keys.ts';

/** Keys an override table names that the task.toml table it overrides does not have. */
function overrideUnknownKeys(o: TaskOverride): string[] {
  const out: string[] = [];
  const check = (schema: Parameters<typeof unknownKeys>[0], value: unknown, prefix: string): void => {
    if (value !== undefined) out.push(...unknownKeys(schema, value, prefix));
  };
  check(environmentSchema, o.environment, 'environment');
  check(verifierSchema, o.verifier, 'verifier');
  if (Array.isArray(o.artifacts)) for (const a of o.artifacts) check(artifactSchema, a, 'artifacts[]');
  return out.filter((k) => !/(^|\.)(memory|storage|allow_internet)$/.test(k));
}

export type GymType = 'train' | 'validation' | 'benchmark';

export interface DatasetSettings {
  readonly root: string;
  /** Path of dataset.toml, or null when the dataset has none. */
  readonly file: string | null;
  readonly type: GymType;
  readonly license: string | null;
  /** null means any agent. */
  readonly allowed_agents: readonly string[] | null;
  readonly domain: string | null;
  readonly verified: boolean;
  readonly source: string | null;
  readonly defaults: { readonly num_repeats: number; readonly timeout_multiplier: number; readonly resource_multiplier: number };
  readonly overrides: Readonly<Record<string, TaskOverride>>;
  /** True once a multiplier other than 1.0 or any override is set: then every digest covers the settings. */
  readonly settings_in_digest: boolean;
  /** The dataset root's verifier.py, graded for single-step tasks without tests/. */
  readonly verifier_py: { readonly path: string; readonly sha256: string } | null;
}

const TOLERATED_TOP = new Set(['dataset', 'tasks', 'gym', 'metrics']);

/** Parses dataset.toml text (or none). `warn` receives notes about keys outside [gym] that are ignored. */
export function parseDatasetToml(
  root: string,
  file: string | null,
  text: string | null,
  verifierPy: DatasetSettings['verifier_py'],
  warn: (m: string) => void = () => {},
): DatasetSettings {
  let doc: Record<string, unknown> = {};
  if (text !== null) {
    try {
      doc = parseToml(text.startsWith('\uFEFF') ? text.slice(1) : text) as Record<string, unknown>;
    } catch (e) {
      const where = e instanceof TomlError ? `line ${e.line}, column ${e.column}` : '';
      throw new DatasetRefusal('dataset_malformed', {
        file: file ?? DATASET_LAYOUT.datasetToml,
        key: where,
        problem: `not valid TOML (${String((e as Error).message).split('\n')[0]})`,
        fix: 'correct the TOML syntax at that position',
      });
    }
  }
  const f = file ?? DATASET_LAYOUT.datasetToml;
  for (const key of Object.keys(doc)) {
    if (!TOLERATED_TOP.has(key)) warn(`${f}: top-level key ${key} is not read by Berth; ignored.`);
  }
  const gymRaw = doc.gym ?? {};
  if (!isTable(gymRaw)) {
    throw new DatasetRefusal('dataset_invalid_value', { file: f, key: 'gym', value: gymRaw, problem: 'gym must be a table', fix: 'write [gym] as a table' });
  }
  const parsed = gymSchema.safeParse(gymRaw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      const name = issue.keys[0]!;
      if (path[0] === 'tasks' && path.length === 2) {
        throw new DatasetRefusal('dataset_unknown_key', {
          file: f,
          key: `gym.tasks.${JSON.stringify(path[1])}.${name}`,
          problem: `an override takes only ${TASK_OVERRIDE_KEYS.join(', ')} (the [gym] tables are complete and strict)`,
          fix: `remove ${name} from [gym.tasks.${JSON.stringify(path[1])}], or set it in the task's own task.toml (see Task Folder Format § [gym.tasks."task-id"])`,
        });
      }
      const table = path.length === 0 ? '[gym]' : `[gym.${path.join('.')}]`;
      throw new DatasetRefusal('dataset_unknown_key', {
        file: f,
        key: `gym.${[...path, name].join('.')}`,
        problem: `${table} has no key ${name} (the [gym] tables are complete and strict)`,
        fix: `remove ${name}, or correct its spelling (see Task Folder Format § Dataset settings)`,
      });
    }
    let value: unknown = gymRaw;
    for (const p of issue.path) value = isTable(value) || Array.isArray(value) ? (value as any)[p as any] : undefined;
    throw new DatasetRefusal('dataset_invalid_value', {
      file: f,
      key: `gym.${path.join('.')}`,
      value,
      problem: issue.code === 'invalid_value' ? `${JSON.stringify(value)} is not one of Gym's values for it` : issue.message.replace(/^Invalid input: /, ''),
      fix: issue.code === 'invalid_value'
        ? `use one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')} (see Task Folder Format § Dataset settings)`
        : 'correct the value (see Task Folder Format § Dataset settings)',
    });
  }
  const gym = parsed.data;
  for (const [id, o] of Object.entries(gym.tasks)) {
    const unknown = overrideUnknownKeys(o);
    if (unknown.length > 0) {
      throw new DatasetRefusal('dataset_unknown_key', {
        file: f,
        key: `gym.tasks."${id}".${unknown[0]}`,
        problem: 'an override may only name keys of the task.toml table it overrides',
        fix: 'correct the key\'s spelling (see Task Folder Format § Task settings), or remove it',
      });
    }
  }
  const type = gym.type ?? (gym.license !== undefined ? 'validation' : 'benchmark');
  if (type === 'example') {
    throw new DatasetRefusal('dataset_example_type', {
      file: f,
      key: 'gym.type',
      value: 'example',
      problem: 'an "example" dataset marks smoke-test samples and is not run',
      fix: 'set type to "train", "validation" or "benchmark"',
    });
  }
  if ((type === 'train' || type === 'validation') && gym.license === undefined) {
    throw new DatasetRefusal('dataset_license_required', {
      file: f,
      key: 'gym.license',
      problem: `a "${type}" dataset needs a license`,
      fix: 'set [gym] license, or type = "benchmark"',
    });
  }
  const d = gym.defaults;
  return {
    root,
    file,
    type,
    license: gym.license ?? null,
    allowed_agents: gym.allowed_agents ?? null,
    domain: gym.domain ?? null,
    verified: gym.verified,
    source: gym.source ?? null,
    defaults: { num_repeats: d.num_repeats, timeout_multiplier: d.timeout_multiplier, resource_multiplier: d.resource_multiplier },
    overrides: gym.tasks,
    settings_in_digest: d.timeout_multiplier !== 1 || d.resource_multiplier !== 1 || Object.keys(gym.tasks).length > 0,
    verifier_py: verifierPy,
  };
}

/** The dataset settings a task's digest covers, or null when none apply. num_repeats never does. */
export function digestSettingsFor(settings: DatasetSettings, taskId: string): unknown {
  if (!settings.settings_in_digest) return null;
  return {
    timeout_multiplier: settings.defaults.timeout_multiplier,
    resource_multiplier: settings.defaults.resource_multiplier,
    override: settings.overrides[taskId] ?? {},
  };
}

/** Berth's agents; the oracle is always admitted (spec § [gym], allowed_agents). */
export function checkAgentAllowed(settings: DatasetSettings, agent: string | undefined, allowUnsupportedPairing = false): void {
  if (agent === undefined || allowUnsupportedPairing || agent === 'oracle') return;
  const allowed = settings.allowed_agents;
  if (allowed === null || allowed.includes(agent)) return;
  throw new DatasetRefusal('agent_not_allowed', {
    file: settings.file ?? DATASET_LAYOUT.datasetToml,
    key: 'gym.allowed_agents',
    value: allowed,
    problem: `agent "${agent}" is not in the dataset's allowed_agents`,
    fix: `run one of ${allowed.map((a) => `"${a}"`).join(', ')} (or the oracle), or pass --allow-unsupported-pairing`,
  });
}

export function checkOverridesNameTasks(settings: DatasetSettings, taskIds: ReadonlySet<string>): void {
  for (const id of Object.keys(settings.overrides)) {
    if (!taskIds.has(id)) {
      throw new DatasetRefusal('override_names_no_task', {
        file: settings.file ?? DATASET_LAYOUT.datasetToml,
        key: `gym.tasks."${id}"`,
        problem: `no task folder is named "${id}"`,
        fix: 'correct the folder name in the table header, or remove the table',
      });
    }
  }
}
