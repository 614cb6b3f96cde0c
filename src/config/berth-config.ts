// berth.toml (current folder, else BERTH_HOME/config.toml): docs/design.md section 7, Config file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'smol-toml';
import { z } from 'zod';
import { configFileOverride } from './env.ts';
import { berthHomeDir } from './paths.ts';

/** s3://bucket[/prefix]: a bucket name as S3 allows it, then an optional key prefix. */
export const STORE_URL = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[A-Za-z0-9!_.*'()\/-]*)?$/;

export const SANDBOX_PROVIDERS = ['docker', 'kubernetes'] as const;
export type SandboxProviderName = (typeof SANDBOX_PROVIDERS)[number];

const schema = z.object({
  images: z.object({ aliases: z.record(z.string(), z.string()).default({}) }).strict().default({ aliases: {} }),
  secrets: z.record(z.string(), z.string()).default({}),
  episode: z.object({
    default_timeout_seconds: z.number().positive().default(21600),
    enforce_task_timeouts: z.boolean().default(true),
    sandbox_ready_timeout_s: z.number().positive().default(900),
    /** Verify every single-step task that declares artifacts separately (Task Folder Verifiers). */
    separate_verifier_for_artifacts: z.boolean().default(false),
  }).strict().default({ default_timeout_seconds: 21600, enforce_task_timeouts: true, sandbox_ready_timeout_s: 900, separate_verifier_for_artifacts: false }),
  resources: z.object({
    cpus: z.number().positive().optional(),
    memory_mb: z.number().int().positive().optional(),
  }).strict().default({}),
  worker: z.object({
    slots: z.number().int().positive().optional(),
    /** Sandboxes seeded ahead for the episodes this host runs next (docs/performance-notes.md, The warm pool); default on. */
    warm_pool: z.boolean().optional(),
  }).strict().default({}),
  // Which sandbox the worker's episodes run in (docs/kubernetes.md); `berth run --sandbox` names the same choice.
  sandbox: z.object({ provider: z.enum(SANDBOX_PROVIDERS).default('docker') }).strict().default({ provider: 'docker' }),
  kubernetes: z.object({
    /** host[:port] of the registry the cluster pulls from; task images are pushed there and pinned by digest. */
    registry: z.string().regex(/^[A-Za-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/, 'expected host[:port][/prefix], e.g. "127.0.0.1:5050"').optional(),
    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'expected a namespace name (a DNS label)').optional(),
    /** A kubeconfig file; default KUBECONFIG, else ~/.kube/config, else the pod's in-cluster credentials. */
    kubeconfig: z.string().min(1).optional(),
    /** A Docker config.json whose `auths` hold the registry's credentials; default $DOCKER_CONFIG/config.json, else ~/.docker/config.json. */
    docker_config: z.string().min(1).optional(),
    /** The most pods the episodes of one cluster and namespace hold at once, over all its workers (default 64). */
    max_pods: z.number({ error: 'expected a whole number of pods of at least 1, e.g. 32' }).int('expected a whole number of pods, e.g. 32').positive('expected at least 1 pod, e.g. 32').optional(),
    /** An imagePullSecret made ahead in the namespace (kubectl create secret docker-registry): pods pull with it and the worker needs no rights on Secrets. */
    image_pull_secret: z.string().regex(/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, 'expected the name of a Secret in the namespace, e.g. "berth-registry"').optional(),
    /** The address pods reach this worker at (its egress proxy and model gateway); default: this host's address toward the first node. */
    egress_address: z.union([z.ipv4(), z.ipv6()], { error: 'expected an IP address pods reach the worker at, e.g. "10.0.0.5"' }).optional(),
    /** Also keep a NetworkPolicy per phase, for a cluster whose CNI enforces them (the pods' own rules hold either way). */
    network_policies: z.boolean({ error: 'expected true or false' }).optional(),
  }).strict().default({}),
  // `berth serve` (docs/training.md): the dataset and agent its runs and NeMo Gym's /run use, where it listens, and the
  // policy /run sends model calls to. A run's request may name its own agent and policy.
  serve: z.object({
    dataset: z.string().min(1).optional(),
    agent: z.string().min(1).optional(),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8642),
    /** NeMo Gym's /run: the policy endpoint (OpenAI-compatible, e.g. vLLM) and model its episodes call. */
    policy_endpoint: z.string().regex(/^https?:\/\//, 'expected an http(s) URL, e.g. "http://127.0.0.1:8000/v1"').optional(),
    policy_model: z.string().min(1).optional(),
    /** The batch id /run episodes carry (their workflow ids start berth/<gym_batch>/). */
    gym_batch: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'expected letters, digits, "_", "." or "-"').default('gym'),
  }).strict().default({ host: '127.0.0.1', port: 8642, gym_batch: 'gym' }),
  // Where every episode's files go as it closes (docs/deployment.md, A results store): an S3-compatible bucket.
  results: z.object({
    store: z.string().regex(STORE_URL, 'expected "s3://bucket" or "s3://bucket/prefix", e.g. "s3://berth-results/team-a"').optional(),
    /** An S3-compatible server's URL (SeaweedFS, MinIO, Ceph, R2): absent for AWS itself. */
    endpoint: z.string().regex(/^https?:\/\/[^/\s]+\/?$/, 'expected the server\'s http(s) URL, e.g. "http://127.0.0.1:8333"').optional(),
    region: z.string().min(1).optional(),
    /** Bucket in the path, not the host name; default true when an endpoint is set (what S3-compatible servers want). */
    path_style: z.boolean({ error: 'expected true or false' }).optional(),
    /** Keep each episode's files on its host once the store has them (default true). */
    keep_local: z.boolean({ error: 'expected true or false' }).default(true),
  }).strict().default({ keep_local: true }),
  // The model gateway (docs/agents.md): USD per million tokens, keyed by provider/model or the bare model name.
  gateway: z.object({
    prices: z.record(z.string(), z.object({
      input: z.number().nonnegative(),
      cached_input: z.number().nonnegative().optional(),
      output: z.number().nonnegative(),
    }).strict()).default({}),
  }).strict().default({ prices: {} }),
}).strict();

export type BerthConfig = z.infer<typeof schema>;

export interface LoadedConfig {
  config: BerthConfig;
  /** The file read, or null when none exists (every default applies). */
  file: string | null;
}

export function configFilePath(cwd = process.cwd()): string | null {
  const named = configFileOverride();
  if (named) return resolve(named);
  const local = resolve(cwd, 'berth.toml');
  if (existsSync(local)) return local;
  const home = join(berthHomeDir(), 'config.toml');
  return existsSync(home) ? home : null;
}

/** Reads berth.toml; a bad file is an error naming the file, the key and what is expected. */
const readOnce = new Map<string, { stamp: string; loaded: LoadedConfig }>();

/**
 * berth.toml, read once per version of the file: activities ask for it on every call, so a file that has not changed
 * (same size and modification time) is not read and validated again.
 */
export function loadBerthConfig(file = configFilePath()): LoadedConfig {
  if (!file) return { config: schema.parse({}), file: null };
  const st = statSync(file, { throwIfNoEntry: false });
  const stamp = st ? `${st.size}:${st.mtimeMs}:${st.ino}` : '';
  const kept = readOnce.get(file);
  if (kept && stamp && kept.stamp === stamp) return structuredClone(kept.loaded);
  const loaded = readBerthConfig(file);
  if (stamp) readOnce.set(file, { stamp, loaded: structuredClone(loaded) });
  return loaded;
}

function readBerthConfig(file: string): LoadedConfig {
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not valid TOML (${(err as Error).message}). Fix the syntax or remove the file.`);
  }
  const result = schema.safeParse(raw);
  if (result.success && result.data.sandbox.provider === 'kubernetes' && !result.data.kubernetes.registry) {
    throw new Error(`${file}: key kubernetes.registry: [sandbox] provider = "kubernetes" needs the registry the cluster pulls task images from. ` +
      'Add [kubernetes] registry = "host:port" (docs/kubernetes.md).');
  }
  if (result.success && !result.data.results.store && (result.data.results.endpoint || result.data.results.region || result.data.results.path_style !== undefined)) {
    throw new Error(`${file}: key results.store: [results] names a server but no bucket. ` +
      'Add [results] store = "s3://bucket/prefix", or remove the [results] keys (docs/configuration.md, [results]).');
  }
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const key = issue.path.join('.');
    throw new Error(`${file}: key ${key || '(top level)'}: ${issue.message}. docs/configuration.md lists the keys and their types.`);
  }
  return { config: result.data, file };
}

/** The berth.toml options the loader applies to every task (for loadDataset / loadTask). */
export function loaderOptions(loaded: LoadedConfig): { separateVerifierForArtifacts?: true; configFile?: string } {
  if (!loaded.config.episode.separate_verifier_for_artifacts) return {};
  return { separateVerifierForArtifacts: true, ...(loaded.file ? { configFile: loaded.file } : {}) };
}
