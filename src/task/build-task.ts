// The pure core of the loader: a task folder snapshot plus the dataset settings that apply to it in,
// an immutable Task (or a RefusalSignal) out. No I/O beyond what the snapshot already holds. Each refusal lives
// in refusals/, one file per row of Task Folder Format § What the loader refuses; the folder's paths in
// layout.ts.
import type { BuildContext } from './build-context.ts';
import { readComposePlan } from './compose.ts';
import { computeTaskDigest } from './digest.ts';
import { refuse } from './errors.ts';
import { toEnvironment } from './environment.ts';
import { checkImageRecorded, resolveImage } from './image-plan.ts';
import { stripCanary } from './instruction.ts';
import { DATASET_LAYOUT, inTask, SANDBOX_LAYOUT, TASK_LAYOUT } from './layout.ts';
import { normaliseLegacy } from './legacy.ts';
import type { Task } from './model.ts';
import { policyAt } from './network.ts';
import { phasesAtBaseline } from './offline-main.ts';
import { mergeOverride } from './overrides.ts';
import { refuseParameterized, refuseTranscriptPairing } from './refusals/current-limitations.ts';
import { checkArtifact, checkInput, parseTaskToml, readTaskData, validateTaskToml } from './refusals/invalid-values.ts';
import { requireInstruction, requireTaskToml, singleStepGrading } from './refusals/missing-files.ts';
import { checkMultiStep } from './refusals/multi-step.ts';
import { checkEnvironmentsSupport } from './refusals/unsupported-settings.ts';
import { taskTomlSchema } from './schema.ts';
import type { TaskSnapshot } from './snapshot.ts';
import { buildSolution, buildSteps, normaliseArtifact, seedTrajectoryOf } from './steps.ts';
import { isTable } from './table.ts';
import { unknownKeys } from './unknown-keys.ts';
import { buildVerifier, type Grading } from './verifier-plan.ts';
import { resolveVerifierMode } from './verifier-mode.ts';

export type { BuildContext, DatasetDefaults, ImageNeed } from './build-context.ts';

export function buildTask(snap: TaskSnapshot, ctx: BuildContext): Task {
  if (snap.problems.length > 0) refuse(snap.problems[0]!);
  const tomlFile = requireTaskToml(snap);
  refuseParameterized(snap, ctx);
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
  const doc = validateTaskToml(mergeOverride(raw, override), ctx, ownArtifacts);

  // Compose tasks run as a group; keys Berth cannot honour are refused here (compose.ts).
  const composeFile = snap.files.has(TASK_LAYOUT.environmentCompose) ? TASK_LAYOUT.environmentCompose : undefined;
  const compose = composeFile ? readComposePlan(composeFile, snap.files.get(composeFile)!.text ?? '', ctx.imageAliases) : null;
  checkEnvironmentsSupport(doc);

  const multiStep = (doc.steps ?? []).length > 0;
  const declared = resolveVerifierMode(doc);
  // berth.toml's separate_verifier_for_artifacts verifies a single-step task that declares artifacts separately.
  const forced = !multiStep && ctx.separateVerifierForArtifacts === true && declared === 'shared' && doc.artifacts.length > 0;
  const mode = forced ? 'separate' : declared;
  if (multiStep) checkMultiStep(doc, ctx);

  const datasetFile = ctx.datasetFile ?? DATASET_LAYOUT.datasetToml;
  const artifacts = doc.artifacts.map(normaliseArtifact);
  artifacts.forEach((a, i) => {
    const fromOverride = i >= ownArtifacts;
    checkArtifact(a, fromOverride ? `gym.tasks."${ctx.id}".artifacts[${i - ownArtifacts}]` : `artifacts[${i}]`, fromOverride ? datasetFile : TASK_LAYOUT.taskToml);
  });
  // Inputs only come from dataset.toml (task.toml's are dropped above).
  doc.verifier.inputs.forEach((name, i) => checkInput(name, `gym.tasks."${ctx.id}".verifier.inputs[${i}]`, datasetFile));

  // A hook or artifact naming a service the task does not have only warns (Task Folder Format § [verifier]).
  const services = compose?.services ?? ['main'];
  const what = compose ? `of ${compose.file}` : 'of this single-sandbox task';
  for (const [i, h] of doc.verifier.collect.entries()) {
    if (!services.includes(h.service)) warn(`task.toml: verifier.collect[${i}].service = "${h.service}" names no service ${what}; the hook is skipped.`);
  }
  for (const [j, step] of (doc.steps ?? []).entries()) {
    for (const [i, h] of step.verifier.collect.entries()) {
      if (!services.includes(h.service)) warn(`task.toml: steps[${j}].verifier.collect[${i}].service = "${h.service}" (step ${step.name}) names no service ${what}; the hook is skipped.`);
    }
  }
  for (const [i, a] of artifacts.entries()) {
    if (!services.includes(a.service)) warn(`task.toml: artifacts[${i}].service = "${a.service}" names no service ${what}; the artifact is skipped.`);
  }
  if (mode === 'separate' && doc.verifier.inputs.length > 0) {
    warn(`${datasetFile}: gym.tasks."${ctx.id}".verifier.inputs is ignored: the task verifies in a separate sandbox, where ${SANDBOX_LAYOUT.verifierLogs} starts empty.`);
  }

  const root = snap.root;
  const tm = ctx.defaults.timeout_multiplier;
  const environment = toEnvironment(doc.environment, ctx);
  const image = resolveImage(environment, snap, ctx, compose !== null);
  checkImageRecorded(image, snap, ctx);

  let instruction: string | null = null;
  let grading: Grading;
  if (multiStep) {
    const file = snap.files.get(TASK_LAYOUT.instruction);
    if (file) instruction = stripCanary(file.text ?? '');
    grading = { kind: 'test_sh', rel: snap.files.has(TASK_LAYOUT.testSh) ? TASK_LAYOUT.testSh : null, datasetVerifier: false };
  } else {
    instruction = stripCanary(requireInstruction(snap).text ?? '');
    grading = singleStepGrading(snap, ctx);
  }
  const verifier = buildVerifier(doc, mode, grading, environment, snap, ctx, forced);
  const solution = buildSolution(doc, snap);
  const steps = buildSteps(doc, snap, solution, ctx, environment);
  // The agent phase's network: [agent]'s own policy, else the environment's baseline.
  const agentNet = policyAt(doc.agent, false, 'agent') ?? environment;
  const taskData = readTaskData(snap);
  const seedTrajectory = seedTrajectoryOf(snap, steps);
  refuseTranscriptPairing(seedTrajectory, root, ctx);

  const digest = computeTaskDigest(snap, {
    datasetSettings: ctx.digestSettings,
    datasetVerifierSha256: grading.datasetVerifier ? ctx.datasetVerifier!.sha256 : null,
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
    agent: { timeout_sec: doc.agent.timeout_sec * tm, user: doc.agent.user ?? null, network_mode: agentNet.network_mode, allowed_hosts: agentNet.allowed_hosts },
    verifier,
    solution,
    image,
    compose,
    seed_trajectory: seedTrajectory,
    skills_source: snap.dirs.has(TASK_LAYOUT.skillsDir) ? inTask(root, TASK_LAYOUT.skillsDir) : null,
    settings: { ...ctx.defaults },
    warnings,
  };
  return deepFreeze(compose?.main_offline ? phasesAtBaseline(task, compose.file, warn) : task);
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
