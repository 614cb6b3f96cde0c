// Task Folder Format § What the loader refuses, Missing images: a build-mode Dockerfile, base image or
// tests/Dockerfile with no record from prepare, a task with no image at all, or a separate verifier with none.
import type { BuildContext, ImageNeed } from '../build-context.ts';
import { refuse } from '../errors.ts';
import { TASK_LAYOUT } from '../layout.ts';

export function checkRecorded(ctx: BuildContext, need: ImageNeed, file: string, key: string): void {
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

export function refuseNoImage(): never {
  return refuse({
    code: 'missing_image',
    file: TASK_LAYOUT.taskToml,
    key: 'environment.docker_image',
    problem: 'the task has neither [environment].docker_image nor environment/Dockerfile, so no sandbox can start',
    fix: 'set docker_image, or add environment/Dockerfile',
  });
}

/** Where a separate verifier's settings come from, for the message: the table that declared its environment. */
export interface VerifierSource {
  /** `verifier.environment`, `steps[1]("x").verifier.environment`, or null when it copies [environment]. */
  table: string | null;
  /** The key that made it separate (for a copy of [environment]). */
  modeKey: string;
  /** The berth.toml whose separate_verifier_for_artifacts made it separate. */
  forcedBy?: string;
}

/** No image: no docker_image in the verifier's environment and no Dockerfile in its build context. */
export function refuseSeparateVerifierWithoutImage(source: VerifierSource, dockerfile: string): never {
  const table = source.table;
  const named = table === null ? '[environment]' : `[${table.startsWith('steps') ? 'steps.verifier.environment' : table}]`;
  if (source.forcedBy !== undefined) {
    return refuse({
      code: 'separate_verifier_without_image',
      file: TASK_LAYOUT.taskToml,
      key: 'environment.docker_image',
      problem: `${source.forcedBy} sets [episode].separate_verifier_for_artifacts, so this task (it declares artifacts) verifies separately, but it has no verifier image: [environment] names no docker_image and there is no ${dockerfile}`,
      fix: `set [environment].docker_image or add ${dockerfile}, or turn separate_verifier_for_artifacts off`,
    });
  }
  return refuse({
    code: 'separate_verifier_without_image',
    file: TASK_LAYOUT.taskToml,
    key: table !== null ? `${table}.docker_image` : source.modeKey,
    value: table !== null ? undefined : 'separate',
    problem: `the separate verifier has no image: ${named} names no docker_image and there is no ${dockerfile}`,
    fix: `set ${table !== null ? named : '[verifier.environment]'}.docker_image, or add ${dockerfile} to build the verifier image`,
  });
}
