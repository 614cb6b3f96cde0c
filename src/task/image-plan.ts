// How the agent's sandbox image is made (Task Folder Format § Dockerfile modes, and [environment]
// docker_image beside a Dockerfile).
import type { BuildContext } from './build-context.ts';
import { classifyDockerfile, type DockerfileClassification } from './dockerfile.ts';
import { applyImageAlias } from './image-alias.ts';
import { inTask, TASK_LAYOUT } from './layout.ts';
import type { Environment, ImagePlan } from './model.ts';
import { checkRecorded, refuseNoImage } from './refusals/missing-images.ts';
import type { TaskSnapshot } from './snapshot.ts';

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

/** `compose`: the task has a compose file, so environment/'s files are not uploaded to the working directory. */
export function resolveImage(env: Environment, snap: TaskSnapshot, ctx: BuildContext, compose = false): ImagePlan {
  const dockerfile = snap.files.get(TASK_LAYOUT.dockerfile);
  const dockerImage = env.docker_image;
  if (dockerfile === undefined) {
    if (dockerImage === null) refuseNoImage();
    return imagePlan({ mode: 'prebuilt', image: dockerImage, docker_image: dockerImage, from: null, from_original: null, dockerfile: null, note: null, upload_environment_files: snap.dirs.has(TASK_LAYOUT.environmentDir) && !compose });
  }
  const c = classifyDockerfile(dockerfile.text ?? '');
  const from = c.from !== null ? applyImageAlias(c.from, ctx.imageAliases) : null;
  const common = { docker_image: dockerImage, from, from_original: c.from, dockerfile: TASK_LAYOUT.dockerfile };
  if (dockerImage !== null) {
    if (c.mode === 'pull') return imagePlan({ ...common, mode: 'pull', image: dockerImage, note: null, settings: c });
    return imagePlan({ ...common, mode: 'prebuilt', image: dockerImage, note: `environment/Dockerfile (${c.mode} mode) is ignored beside docker_image` });
  }
  if (c.mode === 'build') return imagePlan({ ...common, mode: 'build', image: null, note: c.buildReason });
  return imagePlan({ ...common, mode: c.mode, image: from, note: null, settings: c });
}

/** Refuses a plan whose image prepare has not recorded (when the caller passes its records). */
export function checkImageRecorded(image: ImagePlan, snap: TaskSnapshot, ctx: BuildContext): void {
  if (image.mode === 'build') {
    checkRecorded(ctx, { kind: 'build', context: inTask(snap.root, TASK_LAYOUT.environmentDir), dockerfile: TASK_LAYOUT.dockerfile }, TASK_LAYOUT.dockerfile, '');
  } else if ((image.mode === 'pull' || image.mode === 'overlay') && image.image !== null) {
    const byToml = image.docker_image !== null;
    checkRecorded(ctx, { kind: 'base', ref: image.image }, byToml ? TASK_LAYOUT.taskToml : TASK_LAYOUT.dockerfile, byToml ? 'environment.docker_image' : 'FROM');
  }
}
