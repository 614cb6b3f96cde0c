// zod schemas for task.toml (after legacy spellings are normalised, see legacy.ts) and for the
// [gym] table of dataset.toml. Field names and defaults: Task Folder Format and
// Multi-Step Harbor Tasks; Harbor's types: Harbor 0.25 section 1.
import { z } from 'zod';

const positive = z.number().finite().positive();
const nonNegative = z.number().finite().nonnegative();
const wholeNumber = z.number().int().positive();
const count = z.number().int().nonnegative();

/** A user is a name (`agent`, `agent:group`) or a numeric uid, used as written. */
export const userSchema = z.union([z.string().min(1), z.number().int().nonnegative()]);

/** Variables: strings as written. Numbers and booleans are read as their text. */
export const envTableSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform((v) => String(v)))
  .prefault({});

export const networkModeSchema = z.enum(['public', 'no-network', 'allowlist']);

export const healthcheckSchema = z.object({
  command: z.string().min(1),
  interval_sec: positive.default(5),
  timeout_sec: positive.default(30),
  start_period_sec: nonNegative.default(0),
  start_interval_sec: positive.default(5),
  retries: count.default(3),
});

export const mcpServerSchema = z.object({
  name: z.string().min(1),
  transport: z
    .enum(['sse', 'streamable-http', 'http', 'stdio'])
    .default('sse')
    .transform((t) => (t === 'http' ? 'streamable-http' : t)),
  url: z.string().min(1).optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).default([]),
});

export const environmentSchema = z.object({
  docker_image: z.string().min(1).optional(),
  build_timeout_sec: positive.default(600),
  os: z
    .string()
    .default('linux')
    .transform((s) => s.toLowerCase())
    .pipe(z.enum(['linux', 'windows'])),
  cpus: positive.optional(),
  memory_mb: wholeNumber.optional(),
  storage_mb: wholeNumber.optional(),
  gpus: count.optional(),
  gpu_types: z.array(z.string().min(1)).optional(),
  tpu: z.record(z.string(), z.unknown()).optional(),
  env: envTableSchema,
  workdir: z.string().min(1).optional(),
  skills_dir: z.string().min(1).optional(),
  mcp_servers: z.array(mcpServerSchema).default([]),
  healthcheck: healthcheckSchema.optional(),
  network_mode: networkModeSchema.optional(),
  allowed_hosts: z.array(z.string()).optional(),
});

export const artifactSchema = z.union([
  z.string().min(1),
  z.object({
    source: z.string().min(1),
    /** `""` is no destination, as Harbor reads it (its ArtifactConfig turns an empty destination into None). */
    destination: z.string().optional().transform((d) => (d === '' ? undefined : d)),
    service: z.string().min(1).default('main'),
    exclude: z.array(z.string()).default([]),
  }),
]);

export const collectHookSchema = z.object({
  command: z.string().min(1),
  service: z.string().min(1).default('main'),
  timeout_sec: positive.default(60),
  user: userSchema.optional(),
});

export const agentSchema = z.object({
  timeout_sec: positive.default(28800),
  user: userSchema.optional(),
  network_mode: networkModeSchema.optional(),
  allowed_hosts: z.array(z.string()).optional(),
});

export const verifierSchema = z.object({
  timeout_sec: positive.default(600),
  user: userSchema.optional(),
  env: envTableSchema,
  environment_mode: z.enum(['shared', 'separate']).optional(),
  environment: environmentSchema.optional(),
  collect: z.array(collectHookSchema).default([]),
  network_mode: networkModeSchema.optional(),
  allowed_hosts: z.array(z.string()).optional(),
  /** Gym-only: sidecar inputs that survive the shared verifier's reset (dataset.toml overrides). */
  inputs: z.array(z.string()).default([]),
});

export const solutionSchema = z.object({ env: envTableSchema });

export const STEP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const minRewardSchema = z.union([z.number().finite(), z.record(z.string(), z.number().finite())]);

export const stepSchema = z.object({
  name: z.string().regex(STEP_NAME, 'letters, digits, ".", "_" and "-", starting with a letter or digit'),
  agent: z
    .object({
      timeout_sec: positive.optional(),
      user: userSchema.optional(),
      network_mode: networkModeSchema.optional(),
      allowed_hosts: z.array(z.string()).optional(),
    })
    .prefault({}),
  verifier: z
    .object({
      timeout_sec: positive.default(600),
      user: userSchema.optional(),
      env: envTableSchema,
      environment_mode: z.enum(['shared', 'separate']).optional(),
      environment: environmentSchema.optional(),
      /** Run after the task's [[verifier.collect]] hooks, before the step's artifacts and verifier (Harbor's `_collect_hooks_for`). */
      collect: z.array(collectHookSchema).default([]),
      network_mode: networkModeSchema.optional(),
      allowed_hosts: z.array(z.string()).optional(),
    })
    .prefault({}),
  healthcheck: healthcheckSchema.optional(),
  artifacts: z.array(artifactSchema).default([]),
  min_reward: minRewardSchema.nullable().optional(),
});

const scalarText = z.union([z.string(), z.number()]).transform((v) => String(v));

export const taskTableSchema = z.looseObject({
  name: z.string().optional(),
  version: scalarText.optional(),
  description: z.string().optional(),
  authors: z.array(z.looseObject({ name: z.string().optional(), email: z.string().optional() })).optional(),
  keywords: z.array(z.string()).optional(),
});

export const taskTomlSchema = z.object({
  schema_version: scalarText.optional(),
  source: z.string().optional(),
  task: taskTableSchema.optional(),
  metadata: z.record(z.string(), z.unknown()).prefault({}),
  artifacts: z.array(artifactSchema).default([]),
  steps: z.array(stepSchema).optional(),
  multi_step_reward_strategy: z.enum(['mean', 'final']).nullable().optional(),
  environment: environmentSchema.prefault({}),
  agent: agentSchema.prefault({}),
  verifier: verifierSchema.prefault({}),
  solution: solutionSchema.prefault({}),
});

export type TaskToml = z.output<typeof taskTomlSchema>;
export type EnvironmentToml = z.output<typeof environmentSchema>;
export type ArtifactToml = z.output<typeof artifactSchema>;
export type StepToml = z.output<typeof stepSchema>;
export type HealthcheckToml = z.output<typeof healthcheckSchema>;
export type McpServerToml = z.output<typeof mcpServerSchema>;
export type CollectHookToml = z.output<typeof collectHookSchema>;

// ---- dataset.toml [gym] -------------------------------------------------------------------

export const GYM_TYPES = ['train', 'validation', 'benchmark', 'example'] as const;
/** NeMo Gym's dataset license values (its DatasetConfig.license), the only ones [gym] license takes. */
export const GYM_LICENSES = [
  'Apache 2.0', 'MIT', 'Creative Commons Attribution 4.0 International', 'Creative Commons Attribution-ShareAlike 4.0 International',
  'CC BY-SA 4.0', 'CC BY-NC 3.0', 'NVIDIA Internal Use Only, Do Not Distribute', 'NVIDIA Evaluation Dataset License Agreement', 'TBD',
  'GNU General Public License v3.0',
] as const;
/** NeMo Gym's domain values (its Domain enum), the only ones [gym] domain takes. */
export const GYM_DOMAINS = [
  'math', 'coding', 'agent', 'knowledge', 'instruction_following', 'long_context', 'safety', 'games', 'translation', 'e2e', 'rlhf', 'other',
] as const;

export const gymDefaultsSchema = z.strictObject({
  num_repeats: z.number().int().positive().default(1),
  timeout_multiplier: positive.default(1),
  resource_multiplier: positive.default(1),
});

/** The keys a [gym.tasks."id"] table may hold, and only these (Task Folder Format § [gym.tasks."task-id"]). */
export const TASK_OVERRIDE_KEYS = ['environment', 'verifier', 'artifacts'] as const;

/** What a [gym.tasks."id"] table may hold: the task.toml tables it overrides. */
export const taskOverrideSchema = z.strictObject({
  environment: z.record(z.string(), z.unknown()).optional(),
  verifier: z.record(z.string(), z.unknown()).optional(),
  artifacts: z.array(z.unknown()).optional(),
});

export const gymSchema = z.strictObject({
  type: z.enum(GYM_TYPES).optional(),
  license: z.enum(GYM_LICENSES).optional(),
  allowed_agents: z.array(z.string().min(1)).optional(),
  domain: z.enum(GYM_DOMAINS).optional(),
  verified: z.boolean().default(false),
  source: z.string().min(1).optional(),
  defaults: gymDefaultsSchema.prefault({}),
  tasks: z.record(z.string(), taskOverrideSchema).prefault({}),
});

export type GymToml = z.output<typeof gymSchema>;
export type TaskOverride = z.output<typeof taskOverrideSchema>;
