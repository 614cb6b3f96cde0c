// The task's [verifier] as its effective value: what grades, in which mode, the separate verifier's environment
// and image (spec/task-folder-verifiers.md § Shared and separate verification; the image table there).
import type { BuildContext } from './build-context.ts';
import { toEnvironment } from './environment.ts';
import { inTask, TASK_LAYOUT } from './layout.ts';
import type { Environment, NetworkMode, Verifier, VerifierImage, VerifierMode } from './model.ts';
import { checkRecorded, refuseSeparateVerifierWithoutImage } from './refusals/missing-images.ts';
import type { SingleStepGrading } from './refusals/missing-files.ts';
import { network } from './refusals/unsupported-settings.ts';
import { refuse } from './errors.ts';
import type { TaskToml } from './schema.ts';
import type { TaskSnapshot } from './snapshot.ts';
import { checkVerifierCompose } from './verifier-compose.ts';

function resolveVerifierImage(verifierEnv: Environment, declaredTable: boolean, snap: TaskSnapshot): VerifierImage {
  const [yaml, yml] = TASK_LAYOUT.testsCompose;
  const composeText = snap.files.get(yaml)?.text ?? snap.files.get(yml)?.text;
  const composeFile = snap.files.has(yaml) ? yaml : yml;
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
  if (snap.files.has(TASK_LAYOUT.testsDockerfile)) return { kind: 'build', context: 'tests', dockerfile: 'tests/Dockerfile', pinned_image: pinned };
  return refuseSeparateVerifierWithoutImage(declaredTable);
}

/** What grades the task (single-step: from the files; multi-step: the task's tests/test.sh for every step). */
export type Grading = SingleStepGrading | { readonly kind: 'test_sh'; readonly rel: string | null; readonly datasetVerifier: false };

export function buildVerifier(doc: TaskToml, mode: VerifierMode, grading: Grading, environment: Environment, snap: TaskSnapshot, ctx: BuildContext): Verifier {
  const root = snap.root;
  let verifierEnvironment: Environment | null = null;
  let verifierImage: VerifierImage | null = null;
  if (mode === 'separate') {
    verifierEnvironment = doc.verifier.environment ? toEnvironment(doc.verifier.environment, ctx) : environment;
    verifierImage = resolveVerifierImage(verifierEnvironment, doc.verifier.environment !== undefined, snap);
    if (verifierImage.kind === 'build') {
      checkRecorded(ctx, { kind: 'build', context: inTask(root, TASK_LAYOUT.testsDir), dockerfile: TASK_LAYOUT.testsDockerfile }, TASK_LAYOUT.testsDockerfile, '');
    }
  }
  const verifierNet: NetworkMode =
    mode === 'separate'
      ? ((network(doc.verifier.network_mode) ?? verifierEnvironment!.network_mode) as NetworkMode)
      : environment.network_mode;
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
    collect: doc.verifier.collect.map((c) => ({ command: c.command, service: c.service, timeout_sec: c.timeout_sec, user: c.user ?? null })),
    inputs: [...doc.verifier.inputs],
    network_mode: verifierNet,
    environment: verifierEnvironment,
    image: verifierImage,
  };
}
