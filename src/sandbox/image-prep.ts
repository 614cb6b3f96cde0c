// The one home for making a task's images ready (docs/design.md section 7, Images): the agent's (prebuilt, pull,
// overlay, or environment/ built as `hb__<hash>`) and a separate verifier's (prebuilt, or tests/ built as
// `hb__<hash>-verifier`). FROM lines go through the alias map (never a stage name), and a build's hash covers the
// context, the aliases and the ids of its base images, so a base rebuilt locally rebuilds what stands on it.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { applyImageAlias, inTask, TASK_LAYOUT, type Task, type VerifierImage } from '../task/index.ts';
import { SeedFailed } from './errors.ts';
import type { ImageConfig } from './image-config.ts';
import { imageContentHash, imageTagForHash, readContextFiles } from './image-hash.ts';
import type { SandboxProvider } from './provider.ts';
import { servicesToBuild, type ComposeModel } from './compose/model.ts';
import type { ResolvedGroup } from './driver.ts';

const BASE_HINT = 'berth-base:bookworm';
const FROM_LINE = /^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$/gim;

export interface PreparedImage {
  /**
   * What containers are created from: the image id (pinned at prepare: a tag that moves later changes nothing)
   * for pull, overlay and build modes; for a prebuilt image, which has no record, the id its tag names at this seed.
   */
  ref: string;
  /** The reference the task names (after aliases), or the `hb__<hash>` tag Berth built. */
  name: string;
  /** The image's configuration when it is on record (a built image, or a pull or overlay base); else null. */
  config: ImageConfig | null;
  built: boolean;
}

/**
 * A Dockerfile with every FROM image mapped through the aliases. A name an earlier `FROM … AS <stage>` defined,
 * `scratch` and a `$` reference are left as written and are not in `bases` (the images to have locally).
 */
export function aliasFromLines(text: string, aliases: Readonly<Record<string, string>>): { text: string; bases: string[] } {
  const bases: string[] = [];
  const stages = new Set<string>();
  const out = text.replace(FROM_LINE, (_m, head: string, flags: string, ref: string, rest: string) => {
    const stage = /^\s+AS\s+(\S+)/i.exec(rest)?.[1]?.toLowerCase();
    const isStage = stages.has(ref.toLowerCase());
    if (stage) stages.add(stage);
    if (isStage || ref.toLowerCase() === 'scratch' || ref.includes('$')) return `${head}${flags}${ref}${rest}`;
    const mapped = applyImageAlias(ref, aliases);
    bases.push(mapped);
    return `${head}${flags}${mapped}${rest}`;
  });
  return { text: out, bases: [...new Set(bases)] };
}

interface ContextBuild {
  contextDir: string;
  dockerfilePath: string;
  aliases: Readonly<Record<string, string>>;
  suffix: string;
  /** Where the Dockerfile sits in the context (a Compose build's `dockerfile`); default `Dockerfile`. */
  dockerfile?: string;
  buildArgs?: Record<string, string>;
}

/** Builds (once per content hash) a context whose Dockerfile's FROM lines were aliased; returns the tag. */
async function buildContext(provider: SandboxProvider, b: ContextBuild): Promise<{ tag: string; built: boolean }> {
  const original = await readFile(b.dockerfilePath, 'utf8');
  const { text, bases } = aliasFromLines(original, b.aliases);
  const baseIds: Record<string, string> = {};
  for (const base of bases) baseIds[base] = (await provider.images.ensure(base, { aliasHint: BASE_HINT })).id;
  const files = await readContextFiles(b.contextDir);
  const dockerfile = b.dockerfile ?? 'Dockerfile';
  const args = b.buildArgs && Object.keys(b.buildArgs).length > 0 ? b.buildArgs : undefined;
  const tag = imageTagForHash(imageContentHash({ files, aliases: { ...b.aliases }, buildSettings: { dockerfile, baseIds, ...(args ? { args } : {}) } }), b.suffix);
  const options = { tag, ...(dockerfile !== 'Dockerfile' ? { dockerfile } : {}), ...(args ? { buildArgs: args } : {}) };
  if (text === original && b.dockerfilePath === join(b.contextDir, dockerfile)) {
    return { tag, built: (await provider.images.build({ contextDir: b.contextDir, ...options })).built };
  }
  const buildDir = await mkdtemp(join(tmpdir(), 'berth-build-'));
  try {
    await cp(b.contextDir, buildDir, { recursive: true });
    await writeFile(join(buildDir, dockerfile), text);
    return { tag, built: (await provider.images.build({ contextDir: buildDir, ...options })).built };
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
}

async function configOf(provider: SandboxProvider, tag: string): Promise<ImageConfig> {
  const config = await provider.images.config(tag);
  if (!config) throw new Error(`image ${tag} was built but the engine does not have it`);
  return config;
}

/** Refuses GPUs the engine cannot give (Task Folder Format § Environment: `gpus`). */
async function checkGpus(provider: SandboxProvider, gpus: number | null, key: string, task: Task, image: string): Promise<void> {
  if (!gpus || gpus <= 0) return;
  const support = await provider.gpuSupport(image);
  if (!support.ok) {
    throw new SeedFailed(
      'harbor:seed_failed',
      `${task.path}/task.toml: ${key} = ${gpus}, but ${support.reason}. Run the task where sandboxes get GPUs (a Docker engine with the NVIDIA container toolkit, a Kubernetes cluster with NVIDIA's device plugin), or remove ${key}.`,
    );
  }
}

/**
 * The agent image of a pull-, overlay- or build-mode task from its configuration: pinned to its id, on record
 * (`ENTRYPOINT []` in a pull or overlay Dockerfile turns the entrypoint off). Beside a `docker_image`, a pull-mode
 * Dockerfile's FROM image gives the ENTRYPOINT and HEALTHCHECK that run (Task Folder Format, `docker_image` row).
 */
export async function pinnedAgentImage(provider: SandboxProvider, task: Task, name: string, config: ImageConfig, built: boolean): Promise<PreparedImage> {
  const plan = task.image;
  let runtime = config;
  if (plan.mode === 'pull' && plan.docker_image !== null && plan.from !== null && plan.from !== plan.docker_image) {
    const from = await provider.images.ensure(plan.from, { aliasHint: BASE_HINT });
    runtime = { ...config, entrypoint: from.entrypoint, healthcheck: from.healthcheck };
  }
  const cleared = plan.mode !== 'build' && plan.entrypoint_cleared;
  return { ref: config.id, name, config: cleared ? { ...runtime, entrypoint: null } : runtime, built };
}

/** The agent sandbox's image, ready on this engine. */
export async function prepareAgentImage(provider: SandboxProvider, task: Task, aliases: Readonly<Record<string, string>>): Promise<PreparedImage> {
  const plan = task.image;
  let prepared: PreparedImage;
  if (plan.mode === 'build') {
    const { tag, built } = await buildContext(provider, {
      contextDir: inTask(task.path, TASK_LAYOUT.environmentDir), dockerfilePath: join(task.path, plan.dockerfile ?? TASK_LAYOUT.dockerfile), aliases, suffix: '',
    });
    prepared = await pinnedAgentImage(provider, task, tag, await configOf(provider, tag), built);
  } else {
    const name = plan.image!;
    const config = await provider.images.ensure(name, { aliasHint: BASE_HINT });
    // A prebuilt image has no configuration on record, but the episode starts from the id just looked up, so what the
    // tag names now is what runs, and every later read of the image (user, workdir) is answered by id without the engine.
    prepared = plan.mode === 'prebuilt' ? { ref: config.id, name, config: null, built: false } : await pinnedAgentImage(provider, task, name, config, false);
  }
  await checkGpus(provider, task.environment.gpus, '[environment].gpus', task, prepared.ref);
  return prepared;
}

/** The image on this engine: looked up only when a pull_policy forbids pulling (`why`), else pulled when missing. */
async function presentOrPulled(provider: SandboxProvider, ref: string, why: string | null): Promise<void> {
  if (why === null) {
    await provider.images.ensure(ref, { aliasHint: BASE_HINT });
    return;
  }
  if (!(await provider.images.config(ref))) {
    throw new SeedFailed('harbor:seed_failed', `image ${ref} is not on this engine and ${why}, so it is not pulled; load or build it here, or set pull_policy to missing`);
  }
}

async function tagAs(provider: SandboxProvider, source: string, name: string): Promise<void> {
  const at = name.lastIndexOf(':');
  const [repo, tag] = at > name.lastIndexOf('/') ? [name.slice(0, at), name.slice(at + 1)] : [name, 'latest'];
  await provider.images.tag(source, repo, tag);
}

// Hashing reads every file of tests/; a task folder of a given digest hashes the same every turn of every episode.
const verifierTags = new Map<string, string>();

/**
 * A separate verifier's image, ready on this engine (Task Folder Verifiers § Shared and separate verification):
 * the task's own, or a step's (built from its step_verifier_build_context).
 */
export async function prepareVerifierImage(
  provider: SandboxProvider,
  task: Task,
  image: VerifierImage,
  aliases: Readonly<Record<string, string>>,
  gpus: { count: number | null; key: string } = { count: task.verifier.environment?.gpus ?? null, key: '[verifier.environment].gpus' },
): Promise<PreparedImage> {
  let prepared: PreparedImage;
  if (image.kind === 'prebuilt') {
    await presentOrPulled(provider, image.ref, image.pull_policy === 'never' ? 'tests/docker-compose.yaml gives main pull_policy: never' : null);
    prepared = { ref: image.ref, name: image.ref, config: null, built: false };
  } else {
    const key = JSON.stringify([task.path, task.digest, image.context, Object.entries(aliases).sort()]);
    const known = verifierTags.get(key);
    const present = known === undefined ? null : await provider.images.config(known);
    if (known !== undefined && present) {
      prepared = { ref: present.id, name: known, config: present, built: false };
    } else {
      const dockerfile = posix.relative(image.context, image.dockerfile);
      const { tag, built } = await buildContext(provider, {
        contextDir: join(task.path, image.context), dockerfilePath: join(task.path, image.dockerfile), dockerfile, aliases, suffix: '-verifier',
        ...(image.build_args ? { buildArgs: image.build_args } : {}),
      });
      // Harbor tags its verifier build with the name tests/docker-compose.yaml gives main (`image:`).
      if (image.pinned_image !== null) await tagAs(provider, tag, image.pinned_image);
      verifierTags.set(key, tag);
      const config = await configOf(provider, tag);
      prepared = { ref: config.id, name: tag, config, built };
    }
  }
  await checkGpus(provider, gpus.count, gpus.key, task, prepared.ref);
  return prepared;
}

/**
 * A Compose task's sidecars (docs/design.md section 7, Compose groups): an `image:` through the alias map, present
 * locally (else pulled once); a `build:` built as `hb__<hash>` with aliases in its FROM lines. Service → image.
 */
export async function prepareServiceImages(provider: SandboxProvider, resolved: ResolvedGroup, aliases: Readonly<Record<string, string>>): Promise<Record<string, string>> {
  const images: Record<string, string> = {};
  for (const [name, s] of Object.entries(resolved.services)) {
    if (name === 'main' || s.build || !s.image) continue;
    images[name] = applyImageAlias(s.image, aliases);
    await presentOrPulled(provider, images[name], s.pull_policy === 'never' ? `service "${name}" has pull_policy: never` : null);
  }
  for (const b of servicesToBuild(resolved as ComposeModel)) {
    images[b.service] = (await buildContext(provider, {
      contextDir: b.context, dockerfilePath: join(b.context, b.dockerfile), dockerfile: b.dockerfile, buildArgs: b.args, aliases, suffix: '',
    })).tag;
  }
  return images;
}
