// spec/task-folder-format.md § What the loader refuses, Missing images: a build-mode Dockerfile, base image or
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

/** `declaredTable`: the task has a [verifier.environment] (else it reuses [environment]). */
export function refuseSeparateVerifierWithoutImage(declaredTable: boolean): never {
  return refuse({
    code: 'separate_verifier_without_image',
    file: TASK_LAYOUT.taskToml,
    key: declaredTable ? 'verifier.environment.docker_image' : 'verifier.environment_mode',
    value: declaredTable ? undefined : 'separate',
    problem: declaredTable
      ? 'the separate verifier has no image: [verifier.environment] names no docker_image and there is no tests/Dockerfile'
      : 'the separate verifier has no image: [environment] names no docker_image and there is no tests/Dockerfile',
    fix: 'set [verifier.environment].docker_image, or add tests/Dockerfile to build the verifier image',
  });
}
