// The pure core of the loader: a task folder snapshot plus the dataset settings that apply to it in,
// an immutable Task (or a RefusalSignal) out. No I/O beyond what the snapshot already holds.
import { posix } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { computeTaskDigest } from './digest.ts';
import { classifyDockerfile, type DockerfileClassification } from './dockerfile.ts';
import { refuse, type RefusalDetail } from './errors.ts';
import { applyImageAlias } from './image-alias.ts';
import { stripCanary } from './instruction.ts';
import { normaliseLegacy } from './legacy.ts';
import type {
  Artifact,
  Environment,
  ImagePlan,
  NetworkMode,
  Solution,
  Step,
  StepSolution,
  Task,
  Verifier,
  VerifierImage,
  VerifierMode,
} from './model.ts';
import { mergeOverride, overrideHas } from './overrides.ts';
import { taskTomlSchema, type ArtifactToml, type EnvironmentToml, type TaskOverride, type TaskToml } from './schema.ts';
import type { TaskSnapshot } from './snapshot.ts';
import { unknownKeys } from './unknown-keys.ts';
import { checkVerifierCompose } from './verifier-compose.ts';

export interface DatasetDefaults {
  readonly num_repeats: number;
  readonly timeout_multiplier: number;
  readonly resource_multiplier: number;
}

export interface BuildContext {
  /** The task id (folder name). */
  readonly id: string;
  readonly datasetRoot: string;
  readonly defaults: DatasetDefaults;
  readonly override?: TaskOverride;
  /** Canonical dataset settings that enter the digest, or null when none apply. */
  readonly digestSettings: unknown;
  /** The dataset root's verifier.py, if there is one. */
  readonly datasetVerifier: { readonly path: string; readonly sha256: string } | null;
  readonly imageAliases?: Readonly<Record<string, string>>;
  /** Path of dataset.toml, for messages about overrides. */
  readonly datasetFile?: string;
  readonly warn: (message: string) => void;
  readonly unknownKey: (key: string) => void;
  /**
   * Whether prepare left a record for an image the task needs (a build, or a pull/overlay base).
   * Unset, nothing is checked (listing, prepare itself); `run` passes its records.
   */
  readonly imageRecorded?: (need: ImageNeed) => boolean;
  /** The agent that will run, when known: a task seeding the agent with a transcript runs with the oracle only. */
  readonly agent?: string;
  readonly allowUnsupportedPairing?: boolean;
}

/** An image a task needs from prepare (task-folder-format.md § What the loader refuses, Missing images). */
export type ImageNeed =
  | { readonly kind: 'build'; readonly context: string; readonly dockerfile: string }
  | { readonly kind: 'base'; readonly ref: string };

function checkRecorded(ctx: BuildContext, need: ImageNeed, file: string, key: string): void {
  if (!ctx.imageRecorded || ctx.imageRecorded(need)) return;
  refuse({
    code: 'missing_image',
    file,
    key,
    value: need.kind === 'base' ? need.ref : undefined,
    problem: need.kind === 'base' ? 'the base image has no record from prepare' : `the image built from ${need.dockerfile} has no record from prepare`,
    fix: 'run `berth prepare DATASET` (with the same --image-alias options) and try again',
  });
}

type Table = Record<string, unknown>;

function isTable(v: unknown): v is Table {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

function valueAt(doc: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = doc;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as any)[seg as any];
  }
  return cur;
}

function dotted(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

function zodProblem(issue: z.core.$ZodIssue): string {
  return issue.message.replace(/^Invalid input: /, '');
}

function parseTaskToml(text: string): Table {
  try {
    return parseToml(text.startsWith('\uFEFF') ? text.slice(1) : text) as Table;
  } catch (e) {
    const where = e instanceof TomlError ? `line ${e.line}, column ${e.column}` : '';
    const first = String((e as Error).message ?? e).split('\n')[0];
    return refuse({
      code: 'malformed_toml',
      file: 'task.toml',
      key: where,
      problem: `not valid TOML (${first})`,
      fix: 'correct the TOML syntax at that position',
    });
  }
}

function scaleResource(v: number | undefined, m: number): number | null {
  if (v === undefined) return null;
  return m === 1 ? v : Math.ceil(v * m);
}

function toEnvironment(e: EnvironmentToml, resource: number, aliases: BuildContext['imageAliases']): Environment {
  return {
    docker_image: e.docker_image !== undefined ? applyImageAlias(e.docker_image, aliases) : null,
    build_timeout_sec: e.build_timeout_sec,
    os: 'linux',
    cpus: scaleResource(e.cpus, resource),
    memory_mb: scaleResource(e.memory_mb, resource),
    storage_mb: scaleResource(e.storage_mb, resource),
    gpus: e.gpus ?? null,
    gpu_types: e.gpu_types ?? null,
    env: { ...e.env },
    workdir: e.workdir ?? null,
    skills_dir: e.skills_dir ?? null,
    mcp_servers: e.mcp_servers.map((s) => ({
      name: s.name,
      transport: s.transport as 'sse' | 'streamable-http' | 'stdio',
      url: s.url ?? null,
      command: s.command ?? null,
      args: [...s.args],
    })),
    healthcheck: e.healthcheck ? { ...e.healthcheck } : null,
    network_mode: (e.network_mode ?? 'public') as NetworkMode,
  };
}

function checkEnvironmentSupport(e: EnvironmentToml | undefined, key: string): void {
  if (!e) return;
  if (e.os === 'windows') {
    refuse({ code: 'unsupported_os', file: 'task.toml', key: `${key}.os`, value: 'windows', problem: 'Windows tasks are not supported', fix: 'use a Linux image and remove os, or set os = "linux"' });
  }
  if (e.tpu !== undefined) {
    refuse({ code: 'unsupported_tpu', file: 'task.toml', key: `${key}.tpu`, value: e.tpu, problem: 'TPU tasks are not supported', fix: 'remove the tpu table' });
  }
  for (const [i, s] of e.mcp_servers.entries()) {
    const needsUrl = s.transport !== 'stdio';
    if (needsUrl ? !s.url : !s.command) {
      refuse({
        code: 'mcp_without_endpoint',
        file: 'task.toml',
        key: `${key}.mcp_servers[${i}]`,
        value: s.name,
        problem: needsUrl ? `the ${s.transport} MCP server has no url` : 'the stdio MCP server has no command',
        fix: needsUrl ? 'set url, for example "http://mcp-server:8000/mcp"' : 'set command (and args) to start the server',
      });
    }
  }
}

function normaliseArtifact(a: ArtifactToml): Artifact {
  if (typeof a === 'string') return { source: a, destination: null, service: 'main', exclude: [] };
  return { source: a.source, destination: a.destination ?? null, service: a.service, exclude: [...a.exclude] };
}

function checkArtifact(a: Artifact, key: string, file: string): void {
  const bad = (problem: string, fix: string, value: unknown = a.source): never =>
    refuse({ code: 'invalid_artifact', file, key, value, problem, fix });
  const src = a.source;
  if (src.includes('\\')) bad('an artifact path may not contain a backslash', 'write the path with forward slashes');
  if (src.split('/').includes('..')) bad('an artifact path may not have a ".." part', 'name the path without ".."');
  const norm = posix.normalize(src);
  if (norm === '/') bad('the artifact source is the whole file system', 'name the folder or file the verifier needs, e.g. "/workspace"');
  for (const reserved of ['/tests', '/logs/verifier']) {
    if (norm === reserved || norm.startsWith(`${reserved}/`)) {
      bad(`an artifact source under ${reserved} is refused (the verifier owns that folder)`, 'collect from /logs/artifacts or the working directory instead');
    }
  }
  if (a.service !== 'main' && !posix.isAbsolute(src)) bad('an artifact from a sidecar service needs an absolute source', 'write the absolute path inside the service');
  if (a.destination !== null) {
    const d = a.destination;
    if (posix.isAbsolute(d) || /^[A-Za-z]:/.test(d)) bad('the artifact destination must be relative', 'write a path relative to the artifacts folder', d);
    if (d.includes('\\') || d.split('/').includes('..')) bad('the artifact destination may not have ".." or a backslash', 'write a plain relative path', d);
    if (posix.normalize(d) === 'manifest.json') bad('manifest.json is reserved for the artifacts manifest', 'choose another destination', d);
  }
}

function checkInput(name: string, key: string, file: string): void {
  const bad = (problem: string): never =>
    refuse({ code: 'invalid_input', file, key, value: name, problem, fix: 'declare a plain top-level file name such as "actions.jsonl"' });
  if (name === '' || name === '.' || name === '..') bad('an input must be a file name');
  if (/[/\\]/.test(name)) bad('an input may not contain a path separator');
  if (/[*?[]/.test(name)) bad('an input may not be a pattern');
  if (['reward.json', 'reward.txt', 'test-stdout.txt'].includes(name)) bad('an input may not be grader output');
}

function network(mode: string | undefined): NetworkMode | undefined {
  return mode as NetworkMode | undefined;
}

/** Refuses allowlists and per-phase switching; DESIGN.md section 7 (Network). */
function checkNetwork(doc: TaskToml, mode: VerifierMode): void {
  const envNet = doc.environment.network_mode ?? 'public';
  const refuseAllowlist = (key: string): never =>
    refuse({
      code: 'unsupported_network',
      file: 'task.toml',
      key,
      value: 'allowlist',
      problem: 'an allowlist network is not supported on Docker',
      fix: 'use network_mode = "public" or "no-network"',
    });
  const tables: Array<[string, { network_mode?: string } | undefined]> = [
    ['environment.network_mode', doc.environment],
    ['agent.network_mode', doc.agent],
    ['verifier.network_mode', doc.verifier],
    ['verifier.environment.network_mode', doc.verifier.environment],
  ];
  for (const [i, s] of (doc.steps ?? []).entries()) {
    tables.push([`steps[${i}].agent.network_mode`, s.agent], [`steps[${i}].verifier.network_mode`, s.verifier]);
    tables.push([`steps[${i}].verifier.environment.network_mode`, s.verifier.environment]);
  }
  for (const [key, t] of tables) if (t?.network_mode === 'allowlist') refuseAllowlist(key);

  const switching = (key: string, value: string, phase: string): never =>
    refuse({
      code: 'unsupported_network',
      file: 'task.toml',
      key,
      value,
      problem: `switching the network for the ${phase} (the environment's is "${envNet}") is not supported`,
      fix: `remove ${key}, or set [environment].network_mode to the one the whole sandbox should have`,
    });
  const agentNet = network(doc.agent.network_mode);
  if (agentNet !== undefined && agentNet !== envNet) switching('agent.network_mode', agentNet, 'agent phase');
  const verifierNet = network(doc.verifier.network_mode);
  if (mode === 'shared' && verifierNet !== undefined && verifierNet !== envNet) {
    switching('verifier.network_mode', verifierNet, 'shared verifier phase');
  }
  for (const [i, s] of (doc.steps ?? []).entries()) {
    const a = network(s.agent.network_mode);
    if (a !== undefined && a !== envNet) switching(`${stepKey(i, s.name)}.agent.network_mode`, a, `agent phase of step "${s.name}"`);
    const v = network(s.verifier.network_mode);
    if (v !== undefined && v !== envNet) switching(`${stepKey(i, s.name)}.verifier.network_mode`, v, `verifier phase of step "${s.name}"`);
  }
}

function resolveVerifierMode(doc: TaskToml): VerifierMode {
  const v = doc.verifier;
  if (v.environment_mode === 'shared' && v.environment !== undefined) {
    refuse({
      code: 'shared_verifier_with_environment',
      file: 'task.toml',
      key: 'verifier.environment',
      value: 'environment_mode = "shared"',
      problem: 'a shared verifier runs in the agent\'s sandbox and cannot have its own environment',
      fix: 'remove [verifier.environment], or set environment_mode = "separate"',
    });
  }
  return v.environment_mode ?? (v.environment !== undefined ? 'separate' : 'shared');
}

/** A step's mode as Harbor resolves it (spec/separate-verifier-environment.md, step_verifier_mode). */
function stepVerifierMode(step: NonNullable<TaskToml['steps']>[number], taskMode: VerifierMode): VerifierMode {
  return step.verifier.environment_mode ?? (step.verifier.environment !== undefined ? 'separate' : taskMode);
}

/** The refusals of spec/multi-step-tasks.md § What is refused (and its § Verification per step). */
function checkMultiStep(doc: TaskToml, snap: TaskSnapshot, taskMode: VerifierMode): void {
  const steps = doc.steps ?? [];
  if (taskMode === 'separate') {
    refuse({
      code: 'multi_step_separate_verifier',
      file: 'task.toml',
      key: doc.verifier.environment !== undefined ? 'verifier.environment' : 'verifier.environment_mode',
      value: doc.verifier.environment !== undefined ? '[verifier.environment]' : 'separate',
      problem: 'a multi-step task verifies every step in the shared sandbox; a separate verifier is not run',
      fix: 'remove environment_mode = "separate" and [verifier.environment] so each step verifies in the agent\'s sandbox',
    });
  }
  for (const [i, s] of steps.entries()) {
    if (stepVerifierMode(s, taskMode) === 'separate') {
      const byTable = s.verifier.environment !== undefined && s.verifier.environment_mode === undefined;
      refuse({
        code: 'multi_step_separate_verifier',
        file: 'task.toml',
        key: `${stepKey(i, s.name)}.verifier.${byTable ? 'environment' : 'environment_mode'}`,
        value: byTable ? '[steps.verifier.environment]' : 'separate',
        problem: `step "${s.name}" verifies in a separate sandbox, which multi-step tasks do not run`,
        fix: `remove environment_mode = "separate" and [steps.verifier.environment] from step "${s.name}"`,
      });
    }
  }
  const seen = new Set<string>();
  for (const [i, s] of steps.entries()) {
    if (seen.has(s.name)) {
      refuse({ code: 'invalid_value', file: 'task.toml', key: `steps[${i}].name`, value: s.name, problem: 'two steps share this name', fix: 'give every step its own name (and folder)' });
    }
    seen.add(s.name);
    const dir = `steps/${s.name}`;
    const feature = (what: string, where: { file?: string; key?: string; value?: unknown }, fix: string): never =>
      refuse({
        code: 'unsupported_step_feature',
        file: where.file ?? 'task.toml',
        key: where.key ?? '',
        value: where.value,
        problem: `step "${s.name}" uses ${what}, which is not run yet`,
        fix,
      });
    if (snap.dirs.has(`${dir}/workdir`)) feature('a workdir/ folder', { file: `${dir}/workdir/` }, `move the files of ${dir}/workdir/ into the environment, or have the step's instruction create them`);
    if (snap.files.has(`${dir}/setup.sh`)) feature('a setup.sh', { file: `${dir}/setup.sh` }, 'remove the setup script, or do its work in the environment');
    if (s.healthcheck !== undefined) feature('a per-step healthcheck', { key: `${stepKey(i, s.name)}.healthcheck`, value: s.healthcheck.command }, 'move the check to [environment.healthcheck], or remove it');
    if (s.artifacts.length > 0) feature('per-step artifacts', { key: `${stepKey(i, s.name)}.artifacts`, value: s.artifacts }, 'move the paths to the top-level artifacts list, which is collected after every step');
  }
}

/** `steps[1]("finish")`: the index TOML readers count and the name authors recognise. */
function stepKey(i: number, name: string): string {
  return `steps[${i}](${JSON.stringify(name)})`;
}

function abs(root: string, rel: string): string {
  return root.endsWith('/') ? root + rel : `${root}/${rel}`;
}

/** One literal shape for every plan (keeps property access monomorphic). */
function imagePlan(p: {
  mode: ImagePlan['mode'];
  image: string | null;
  docker_image: string | null;
  from: string | null;
  from_original: string | null;
  dockerfile: string | null;
  note: string | null;
  upload_environment_files?: boolean;
  settings?: DockerfileClassification;
}): ImagePlan {
  const c = p.settings;
  return {
    mode: p.mode,
    image: p.image,
    docker_image: p.docker_image,
    from: p.from,
    from_original: p.from_original,
    workdir: c ? c.workdir : null,
    env: c ? c.env : {},
    user: c ? c.user : null,
    runs: c ? c.runs : [],
    instructions: c ? c.instructions : [],
    entrypoint_cleared: c ? c.entrypointCleared : false,
    dockerfile: p.dockerfile,
    note: p.note,
    upload_environment_files: p.upload_environment_files ?? false,
  };
}

function resolveImage(env: Environment, snap: TaskSnapshot, ctx: BuildContext): ImagePlan {
  const dockerfile = snap.files.get('environment/Dockerfile');
  const dockerImage = env.docker_image;
  if (dockerfile === undefined) {
    if (dockerImage === null) {
      refuse({
        code: 'missing_image',
        file: 'task.toml',
        key: 'environment.docker_image',
        problem: 'the task has neither [environment].docker_image nor environment/Dockerfile, so no sandbox can start',
        fix: 'set docker_image, or add environment/Dockerfile',
      });
    }
    return imagePlan({ mode: 'prebuilt', image: dockerImage, docker_image: dockerImage, from: null, from_original: null, dockerfile: null, note: null, upload_environment_files: snap.dirs.has('environment') });
  }
  const c = classifyDockerfile(dockerfile.text ?? '');
  const from = c.from !== null ? applyImageAlias(c.from, ctx.imageAliases) : null;
  const common = { docker_image: dockerImage, from, from_original: c.from, dockerfile: 'environment/Dockerfile' };
  if (dockerImage !== null) {
    if (c.mode === 'pull') return imagePlan({ ...common, mode: 'pull', image: dockerImage, note: null, settings: c });
    return imagePlan({ ...common, mode: 'prebuilt', image: dockerImage, note: `environment/Dockerfile (${c.mode} mode) is ignored beside docker_image` });
  }
  if (c.mode === 'build') return imagePlan({ ...common, mode: 'build', image: null, note: c.buildReason });
  return imagePlan({ ...common, mode: c.mode, image: from, note: null, settings: c });
}

function resolveVerifierImage(verifierEnv: Environment, declaredTable: boolean, snap: TaskSnapshot): VerifierImage {
  const composeText = snap.files.get('tests/docker-compose.yaml')?.text ?? snap.files.get('tests/docker-compose.yml')?.text;
  const composeFile = snap.files.has('tests/docker-compose.yaml') ? 'tests/docker-compose.yaml' : 'tests/docker-compose.yml';
  const prebuilt = verifierEnv.docker_image;
  let pinned: string | null = null;
  if (composeText !== undefined) {
    const check = checkVerifierCompose(composeText, prebuilt !== null);
    if (!check.ok) {
      refuse({ code: 'verifier_compose', file: composeFile, key: check.key, value: check.value, problem: check.problem, fix: `keep ${composeFile} to services.main with image, build and pull_policy only, or remove it` });
    }
    pinned = check.main?.image ?? null;
  }
  if (prebuilt !== null) return { kind: 'prebuilt', ref: prebuilt };
  if (snap.files.has('tests/Dockerfile')) return { kind: 'build', context: 'tests', dockerfile: 'tests/Dockerfile', pinned_image: pinned };
  return refuse({
    code: 'separate_verifier_without_image',
    file: 'task.toml',
    key: declaredTable ? 'verifier.environment.docker_image' : 'verifier.environment_mode',
    value: declaredTable ? undefined : 'separate',
    problem: declaredTable
      ? 'the separate verifier has no image: [verifier.environment] names no docker_image and there is no tests/Dockerfile'
      : 'the separate verifier has no image: [environment] names no docker_image and there is no tests/Dockerfile',
    fix: 'set [verifier.environment].docker_image, or add tests/Dockerfile to build the verifier image',
  });
}

function solutionIn(snap: TaskSnapshot, dir: string): 'solve_sh' | 'answer_md' | null {
  if (snap.files.has(`${dir}/solve.sh`)) return 'solve_sh';
  if (snap.files.has(`${dir}/answer.md`)) return 'answer_md';
  return null;
}

function validate(doc: Table, ctx: BuildContext, ownArtifacts: number): TaskToml {
  const result = taskTomlSchema.safeParse(doc);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path;
  // Override artifacts come after the task's own, so an index says whose entry it is.
  const artifactIndex = path[0] === 'artifacts' && typeof path[1] === 'number' ? path[1] : null;
  const fromOverride = artifactIndex !== null ? artifactIndex >= ownArtifacts : overrideHas(ctx.override, path);
  const overridePath = artifactIndex !== null && fromOverride ? ['artifacts', artifactIndex - ownArtifacts, ...path.slice(2)] : path;
  const key = dotted(fromOverride ? overridePath : path);
  const detail: RefusalDetail = {
    code: 'invalid_value',
    file: fromOverride ? (ctx.datasetFile ?? 'dataset.toml') : 'task.toml',
    key: fromOverride ? `gym.tasks."${ctx.id}".${key}` : key,
    value: valueAt(doc, path),
    problem: zodProblem(issue),
    fix: `correct ${dotted(path)} (see spec/task-folder-format.md § Task settings)`,
  };
  return refuse(detail);
}

export function buildTask(snap: TaskSnapshot, ctx: BuildContext): Task {
  if (snap.problems.length > 0) refuse(snap.problems[0]!);
  const tomlFile = snap.files.get('task.toml');
  if (tomlFile === undefined) {
    refuse({ code: 'unreadable', file: 'task.toml', key: '', problem: 'the task folder has no task.toml', fix: 'add task.toml' });
  }
  const warnings: string[] = [];
  const warn = (m: string): void => {
    warnings.push(m);
    ctx.warn(m);
  };
  const raw = parseTaskToml(tomlFile.text ?? '');
  for (const key of unknownKeys(taskTomlSchema, raw)) {
    if (key === 'version' || key === 'multi_step_reward_mode' || /(^|\.)(memory|storage|allow_internet)$/.test(key)) continue;
    ctx.unknownKey(key);
  }
  // Sidecar inputs are Gym's and live in dataset.toml; Harbor's task.toml has no such key.
  if (isTable(raw.verifier) && 'inputs' in raw.verifier) {
    ctx.unknownKey('verifier.inputs');
    delete raw.verifier.inputs;
  }
  normaliseLegacy(raw, warn);
  let override = ctx.override;
  if (override) {
    override = structuredClone(override);
    normaliseLegacy({ environment: override.environment, verifier: override.verifier }, warn);
  }
  const ownArtifacts = Array.isArray(raw.artifacts) ? raw.artifacts.length : 0;
  const doc = validate(mergeOverride(raw, override), ctx, ownArtifacts);

  // Compose tasks wait for their own issue (DESIGN.md section 7).
  for (const f of ['environment/docker-compose.yaml', 'environment/docker-compose.yml']) {
    if (snap.files.has(f)) {
      refuse({ code: 'compose_unsupported', file: f, key: '', problem: 'multi-container (Compose) tasks are not run yet', fix: 'run the task with a single environment/Dockerfile or docker_image, or wait for Compose support' });
    }
  }
  checkEnvironmentSupport(doc.environment, 'environment');
  checkEnvironmentSupport(doc.verifier.environment, 'verifier.environment');
  for (const [i, s] of (doc.steps ?? []).entries()) checkEnvironmentSupport(s.verifier.environment, `steps[${i}].verifier.environment`);

  const multiStep = (doc.steps ?? []).length > 0;
  const mode = resolveVerifierMode(doc);
  if (multiStep) checkMultiStep(doc, snap, mode);
  checkNetwork(doc, mode);

  const datasetFile = ctx.datasetFile ?? 'dataset.toml';
  const artifacts = doc.artifacts.map(normaliseArtifact);
  artifacts.forEach((a, i) => {
    const fromOverride = i >= ownArtifacts;
    checkArtifact(a, fromOverride ? `gym.tasks."${ctx.id}".artifacts[${i - ownArtifacts}]` : `artifacts[${i}]`, fromOverride ? datasetFile : 'task.toml');
  });
  // Inputs only come from dataset.toml (task.toml's are dropped above).
  doc.verifier.inputs.forEach((name, i) => checkInput(name, `gym.tasks."${ctx.id}".verifier.inputs[${i}]`, datasetFile));

  // Without Compose there is no service but main: such hooks and artifacts only warn (task-folder-format.md § Verifier).
  for (const [i, h] of doc.verifier.collect.entries()) {
    if (h.service !== 'main') warn(`task.toml: verifier.collect[${i}].service = "${h.service}" names no service of this single-sandbox task; the hook is skipped.`);
  }
  for (const [i, a] of artifacts.entries()) {
    if (a.service !== 'main') warn(`task.toml: artifacts[${i}].service = "${a.service}" names no service of this single-sandbox task; the artifact is skipped.`);
  }
  if (mode === 'separate' && doc.verifier.inputs.length > 0) {
    warn(`${datasetFile}: gym.tasks."${ctx.id}".verifier.inputs is ignored: the task verifies in a separate sandbox, where /logs/verifier starts empty.`);
  }

  const root = snap.root;
  const tm = ctx.defaults.timeout_multiplier;
  const rm = ctx.defaults.resource_multiplier;
  const environment = toEnvironment(doc.environment, rm, ctx.imageAliases);
  const image = resolveImage(environment, snap, ctx);
  if (image.mode === 'build') checkRecorded(ctx, { kind: 'build', context: abs(snap.root, 'environment'), dockerfile: 'environment/Dockerfile' }, 'environment/Dockerfile', '');
  else if ((image.mode === 'pull' || image.mode === 'overlay') && image.image !== null) {
    checkRecorded(ctx, { kind: 'base', ref: image.image }, image.docker_image !== null ? 'task.toml' : 'environment/Dockerfile', image.docker_image !== null ? 'environment.docker_image' : 'FROM');
  }

  // Files: spec/task-folder-format.md § What the loader refuses (Missing files).
  const hasTestsDir = snap.dirs.has('tests');
  let instruction: string | null = null;
  const instructionFile = snap.files.get('instruction.md');
  if (instructionFile) instruction = stripCanary(instructionFile.text ?? '');

  let verifierKind: Verifier['kind'] = multiStep ? 'test_sh' : 'none';
  let script: string | null = multiStep && snap.files.has('tests/test.sh') ? abs(root, 'tests/test.sh') : null;
  let pythonInTaskTests = false;
  let usesDatasetVerifier = false;
  if (!multiStep) {
    if (instructionFile === undefined) {
      refuse({ code: 'missing_instruction', file: 'instruction.md', key: '', problem: 'a single-step task needs instruction.md (the agent\'s prompt)', fix: 'add instruction.md to the task folder' });
    }
    if (snap.files.has('tests/test.sh')) {
      verifierKind = 'test_sh';
      script = abs(root, 'tests/test.sh');
    } else if (snap.files.has('tests/verifier.py')) {
      verifierKind = 'python';
      script = abs(root, 'tests/verifier.py');
      pythonInTaskTests = true;
    } else if (!hasTestsDir) {
      if (ctx.datasetVerifier === null) {
        refuse({ code: 'missing_tests', file: 'tests/', key: '', problem: 'a single-step task needs a tests/ folder (test.sh or verifier.py), unless the dataset has verifier.py', fix: 'add tests/test.sh, or a verifier.py at the dataset root' });
      }
      verifierKind = 'python';
      script = ctx.datasetVerifier.path;
      usesDatasetVerifier = true;
    }
  }

  let verifierEnvironment: Environment | null = null;
  let verifierImage: VerifierImage | null = null;
  if (mode === 'separate') {
    verifierEnvironment = doc.verifier.environment ? toEnvironment(doc.verifier.environment, rm, ctx.imageAliases) : environment;
    verifierImage = resolveVerifierImage(verifierEnvironment, doc.verifier.environment !== undefined, snap);
    if (verifierImage.kind === 'build') checkRecorded(ctx, { kind: 'build', context: abs(snap.root, 'tests'), dockerfile: 'tests/Dockerfile' }, 'tests/Dockerfile', '');
  }
  const verifierNet: NetworkMode =
    mode === 'separate'
      ? ((network(doc.verifier.network_mode) ?? verifierEnvironment!.network_mode) as NetworkMode)
      : environment.network_mode;

  const verifier: Verifier = {
    kind: verifierKind,
    script,
    python_in_task_tests: pythonInTaskTests,
    tests_dir: hasTestsDir ? abs(root, 'tests') : null,
    mode,
    timeout_sec: doc.verifier.timeout_sec * tm,
    user: doc.verifier.user ?? null,
    env: { ...doc.verifier.env },
    collect: doc.verifier.collect.map((c) => ({ command: c.command, service: c.service, timeout_sec: c.timeout_sec, user: c.user ?? null })),
    inputs: [...doc.verifier.inputs],
    network_mode: verifierNet,
    environment: verifierEnvironment,
    image: verifierImage,
  };

  const solutionKind = snap.dirs.has('solution') ? solutionIn(snap, 'solution') : null;
  const solution: Solution = {
    dir: snap.dirs.has('solution') ? abs(root, 'solution') : null,
    kind: solutionKind,
    env: { ...doc.solution.env },
  };

  const agentTimeout = doc.agent.timeout_sec;
  const steps: Step[] = (doc.steps ?? []).map((s) => {
    const dir = `steps/${s.name}`;
    if (!snap.dirs.has(dir)) {
      refuse({ code: 'missing_step_folder', file: `${dir}/`, key: '', problem: `step "${s.name}" has no folder`, fix: `add ${dir}/ with instruction.md (and tests/test.sh unless the task's tests/ has one)` });
    }
    const instr = snap.files.get(`${dir}/instruction.md`);
    if (instr === undefined) {
      refuse({ code: 'missing_step_instruction', file: `${dir}/instruction.md`, key: '', problem: `step "${s.name}" has no instruction.md`, fix: `add ${dir}/instruction.md with the turn's prompt` });
    }
    const own = snap.files.has(`${dir}/tests/test.sh`);
    if (!own && !snap.files.has('tests/test.sh')) {
      refuse({ code: 'missing_step_test', file: `${dir}/tests/test.sh`, key: '', problem: `step "${s.name}" has no test.sh in ${dir}/tests/ or the task's tests/`, fix: `add ${dir}/tests/test.sh, or tests/test.sh for every step` });
    }
    const testsDirs: string[] = [];
    if (hasTestsDir) testsDirs.push(abs(root, 'tests'));
    if (snap.dirs.has(`${dir}/tests`)) testsDirs.push(abs(root, `${dir}/tests`));
    let stepSolution: StepSolution | null = null;
    if (snap.dirs.has(`${dir}/solution`)) stepSolution = { dir: abs(root, `${dir}/solution`), kind: solutionIn(snap, `${dir}/solution`), from: 'step' };
    else if (solution.dir !== null && solution.kind !== null) stepSolution = { dir: solution.dir, kind: solution.kind, from: 'task' };
    const minReward = s.min_reward ?? null;
    return {
      name: s.name,
      dir: abs(root, dir),
      instruction: stripCanary(instr.text ?? ''),
      agent: { timeout_sec: (s.agent.timeout_sec ?? agentTimeout) * tm, user: s.agent.user ?? doc.agent.user ?? null },
      verifier: {
        timeout_sec: s.verifier.timeout_sec * tm,
        user: s.verifier.user ?? doc.verifier.user ?? null,
        env: { ...doc.verifier.env, ...s.verifier.env },
        tests_dirs: testsDirs,
        script: abs(root, own ? `${dir}/tests/test.sh` : 'tests/test.sh'),
      },
      min_reward: typeof minReward === 'number' || minReward === null ? minReward : { ...minReward },
      solution: stepSolution,
    };
  });

  let taskData: unknown = null;
  const taskDataFile = snap.files.get('task_data.json');
  if (taskDataFile) {
    try {
      taskData = JSON.parse(taskDataFile.text ?? '');
    } catch (e) {
      refuse({ code: 'invalid_value', file: 'task_data.json', key: '', problem: `not valid JSON (${(e as Error).message})`, fix: 'write the task fields as one JSON object' });
    }
    if (!isTable(taskData)) {
      refuse({ code: 'invalid_value', file: 'task_data.json', key: '', value: taskData, problem: 'the task fields must be a JSON object', fix: 'write the task fields as one JSON object' });
    }
  }

  let seedTrajectory: string | null = null;
  if (snap.files.has('trajectory.json')) seedTrajectory = abs(root, 'trajectory.json');
  else if (multiStep && snap.files.has(`steps/${steps[0]!.name}/trajectory.json`)) seedTrajectory = abs(root, `steps/${steps[0]!.name}/trajectory.json`);

  // task-folder-format.md § Current limitations: a transcript-seeded task runs only with the oracle.
  if (seedTrajectory !== null && ctx.agent !== undefined && ctx.agent !== 'oracle' && !ctx.allowUnsupportedPairing) {
    refuse({
      code: 'unsupported_transcript',
      file: seedTrajectory.slice(root.length + 1),
      key: '',
      value: ctx.agent,
      problem: `the task seeds the agent with a transcript, which only the oracle runs (agent "${ctx.agent}")`,
      fix: 'run the task with --agent oracle, or remove the trajectory.json',
    });
  }

  const digest = computeTaskDigest(snap, {
    datasetSettings: ctx.digestSettings,
    datasetVerifierSha256: usesDatasetVerifier ? ctx.datasetVerifier!.sha256 : null,
  });

  const task: Task = {
    id: ctx.id,
    path: root,
    dataset_root: ctx.datasetRoot,
    digest,
    schema_version: doc.schema_version ?? null,
    name: doc.task?.name ?? null,
    source: doc.source ?? null,
    metadata: doc.metadata,
    instruction,
    task_data: taskData,
    multi_step: multiStep,
    steps,
    multi_step_reward_strategy: doc.multi_step_reward_strategy ?? 'mean',
    artifacts,
    environment,
    agent: { timeout_sec: agentTimeout * tm, user: doc.agent.user ?? null, network_mode: environment.network_mode },
    verifier,
    solution,
    image,
    seed_trajectory: seedTrajectory,
    skills_source: snap.dirs.has('environment/skills') ? abs(root, 'environment/skills') : null,
    settings: { ...ctx.defaults },
    warnings,
  };
  return deepFreeze(task);
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const k in value) {
      const v = (value as Record<string, unknown>)[k];
      if (typeof v === 'object' && v !== null) deepFreeze(v);
    }
  }
  return value;
}
