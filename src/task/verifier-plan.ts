// The task's [verifier] as its effective value: what grades, in which mode, the separate verifier's environment
// and image (Task Folder Verifiers § Shared and separate verification; the image table there), and the same
// resolution for a step that verifies separately (nemo_gym.data.tasks.harbor.verifier_env, step_verifier_environment
// and step_verifier_build_context).
import type { BuildContext } from './build-context.ts';
import { toEnvironment } from './environment.ts';
import { refuse } from './errors.ts';
import { COMPOSE_FILE, inTask, TASK_LAYOUT } from './layout.ts';
import type { CollectHook, Environment, Verifier, VerifierImage, VerifierMode } from './model.ts';
import { policyAt } from './network.ts';
import { checkRecorded, refuseSeparateVerifierWithoutImage, type VerifierSource } from './refusals/missing-images.ts';
import type { SingleStepGrading } from './refusals/missing-files.ts';
import { stepKey } from './refusals/keys.ts';
import type { CollectHookToml, StepToml, TaskToml } from './schema.ts';
import type { TaskSnapshot } from './snapshot.ts';
import { checkVerifierCompose, type VerifierComposeMain } from './verifier-compose.ts';
import { stepVerifierBuildContext, stepVerifierEnvironment } from './verifier-mode.ts';

/** A `[[verifier.collect]]` hook, or a step's `[[steps.verifier.collect]]` one (`step` names it). */
export function collectHookOf(c: CollectHookToml, step?: string): CollectHook {
  return { command: c.command, service: c.service, timeout_sec: c.timeout_sec, user: c.user ?? null, ...(step !== undefined ? { step } : {}) };
}

/** The image in `context` (`tests`, or a step's tests folder): the environment's docker_image, else its Dockerfile. */
function resolveVerifierImage(verifierEnv: Environment, source: VerifierSource, snap: TaskSnapshot, context: string): VerifierImage {
  const named = `${context}/${COMPOSE_FILE}`;
  const composeFile = snap.files.has(named) ? named : undefined;
  const prebuilt = verifierEnv.docker_image;
  let main: VerifierComposeMain | null = null;
  if (composeFile !== undefined) {
    const check = checkVerifierCompose(snap.files.get(composeFile)!.text ?? '', prebuilt !== null);
    if (!check.ok) {
      refuse({ code: 'verifier_compose', file: composeFile, key: check.key, value: check.value, problem: check.problem, fix: `keep ${composeFile} to services.main with image, build and pull_policy only, or remove it` });
    }
    main = check.main;
  }
  if (prebuilt !== null) return { kind: 'prebuilt', ref: prebuilt, ...(main?.pull_policy === 'never' ? { pull_policy: 'never' as const } : {}) };
  const dockerfile = `${context}/${main?.build?.dockerfile ?? 'Dockerfile'}`;
  const args = main?.build?.args ?? {};
  if (snap.files.has(dockerfile)) {
    return { kind: 'build', context, dockerfile, pinned_image: main?.image ?? null, ...(Object.keys(args).length > 0 ? { build_args: args } : {}) };
  }
  if (main?.build && main.build.dockerfile !== 'Dockerfile') {
    refuse({ code: 'verifier_compose', file: composeFile!, key: 'services.main.build.dockerfile', value: main.build.dockerfile, problem: `${dockerfile} does not exist`, fix: `add ${dockerfile}, or name the Dockerfile that is in ${context}/` });
  }
  return refuseSeparateVerifierWithoutImage(source, dockerfile);
}

export interface SeparateVerifier {
  environment: Environment;
  image: VerifierImage;
  /** How task.toml names the table its env comes from, for messages. */
  envTable: string;
}

/**
 * A separate verifier's environment and image for the task (`step` null) or one of its steps; null in shared mode.
 * `environment` is the task's effective [environment] (a mode-only separate verifier grades in a copy of it).
 */
export function separateVerifierOf(
  doc: TaskToml, step: { index: number; toml: StepToml } | null, environment: Environment, snap: TaskSnapshot, ctx: BuildContext,
  /** Made separate by berth.toml's separate_verifier_for_artifacts: a copy of [environment]. */
  forced = false,
): SeparateVerifier | null {
  const resolved = stepVerifierEnvironment(doc, step?.toml.verifier ?? null) ?? (forced ? { table: doc.environment, source: 'environment' as const } : null);
  if (resolved === null) return null;
  const key = step === null ? 'verifier' : `${stepKey(step.index, step.toml.name)}.verifier`;
  const table = resolved.source === 'step' ? `${key}.environment` : resolved.source === 'verifier' ? 'verifier.environment' : null;
  const env = table === null ? environment : toEnvironment(resolved.table, ctx, table, resolved.source !== 'step');
  const context = step === null ? TASK_LAYOUT.testsDir : stepVerifierBuildContext(snap.dirs, step.toml.name);
  const modeKey = step !== null && step.toml.verifier.environment_mode !== undefined ? `${key}.environment_mode` : 'verifier.environment_mode';
  const image = resolveVerifierImage(env, { table, modeKey, ...(forced ? { forcedBy: ctx.configFile ?? 'berth.toml' } : {}) }, snap, context);
  if (image.kind === 'build') checkRecorded(ctx, { kind: 'build', context: inTask(snap.root, image.context), dockerfile: image.dockerfile }, image.dockerfile, '');
  const envTable = resolved.source === 'step' ? `[steps.verifier.environment].env of step "${step!.toml.name}"` : resolved.source === 'verifier' ? '[verifier.environment].env' : '[environment].env';
  return { environment: env, image, envTable };
}

/** What grades the task (single-step: from the files; multi-step: the task's tests/test.sh for every step). */
export type Grading = SingleStepGrading | { readonly kind: 'test_sh'; readonly rel: string | null; readonly datasetVerifier: false };

export function buildVerifier(doc: TaskToml, mode: VerifierMode, grading: Grading, environment: Environment, snap: TaskSnapshot, ctx: BuildContext, forced = false): Verifier {
  const root = snap.root;
  // A multi-step task's steps resolve their own separate verifiers (steps.ts).
  const separate = doc.steps !== undefined && doc.steps.length > 0 ? null : separateVerifierOf(doc, null, environment, snap, ctx, forced);
  // The verifier phase's network: [verifier]'s own, else the baseline of the sandbox test.sh runs in.
  const net = policyAt(doc.verifier, false, 'verifier') ?? (separate?.environment ?? environment);
  const script = grading.datasetVerifier ? grading.path : grading.rel === null ? null : inTask(root, grading.rel);
  return {
    kind: grading.kind,
    script,
    python_in_task_tests: !grading.datasetVerifier && grading.rel === TASK_LAYOUT.verifierPy,
    tests_dir: snap.dirs.has(TASK_LAYOUT.testsDir) ? inTask(root, TASK_LAYOUT.testsDir) : null,
    mode,
    timeout_sec: doc.verifier.timeout_sec * ctx.defaults.timeout_multiplier,
    user: doc.verifier.user ?? null,
    env: { ...doc.verifier.env },
    collect: doc.verifier.collect.map((c) => collectHookOf(c)),
    inputs: [...doc.verifier.inputs],
    network_mode: net.network_mode,
    allowed_hosts: net.allowed_hosts,
    environment: separate?.environment ?? null,
    env_table: separate?.envTable ?? null,
    image: separate?.image ?? null,
  };
}
