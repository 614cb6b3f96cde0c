import type Docker from 'dockerode';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageContentHash, imageTagForHash, readContextFiles, type SandboxProvider } from '../sandbox/index.ts';
import { applyImageAlias, type Task } from '../task/index.ts';

/** The image's own configuration, when Berth has it on record (DESIGN.md section 7, Images). */
export interface ImageConfig {
  entrypoint: string[] | null;
  cmd: string[] | null;
  env: Record<string, string>;
}

export interface PreparedImage {
  image: string;
  config: ImageConfig | null;
  built: boolean;
}

const BASE_HINT = 'berth-base:bookworm';

async function inspectConfig(docker: Docker, ref: string): Promise<ImageConfig> {
  const info = await docker.getImage(ref).inspect();
  const env: Record<string, string> = {};
  for (const kv of info.Config?.Env ?? []) {
    const at = kv.indexOf('=');
    if (at > 0) env[kv.slice(0, at)] = kv.slice(at + 1);
  }
  const list = (v: string | string[] | null | undefined) => (v == null ? null : Array.isArray(v) ? v : [v]);
  return { entrypoint: list(info.Config?.Entrypoint), cmd: list(info.Config?.Cmd), env };
}

/** FROM lines of a build-mode Dockerfile, rewritten through the alias map. */
export function aliasFromLines(dockerfile: string, aliases: Readonly<Record<string, string>>): { text: string; bases: string[] } {
  const bases: string[] = [];
  const text = dockerfile.replace(/^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$/gim, (_m, head: string, flags: string, ref: string, rest: string) => {
    const mapped = applyImageAlias(ref, aliases);
    bases.push(mapped);
    return `${head}${flags}${mapped}${rest}`;
  });
  return { text, bases };
}

/**
 * Makes the agent sandbox's image ready: a present (or pullable) image for prebuilt, pull and
 * overlay modes; a content-hashed `hb__<hash>` build for build mode.
 */
export async function prepareImage(docker: Docker, provider: SandboxProvider, task: Task, aliases: Readonly<Record<string, string>>): Promise<PreparedImage> {
  const plan = task.image;
  if (plan.mode !== 'build') {
    const image = plan.image!;
    await provider.ensureImage(image, { aliasHint: BASE_HINT });
    const onRecord = plan.mode === 'pull' || plan.mode === 'overlay';
    const config = onRecord ? await inspectConfig(docker, image) : null;
    if (config && plan.entrypoint_cleared) config.entrypoint = null;
    return { image, config, built: false };
  }
  const contextDir = join(task.path, 'environment');
  const original = readFileSync(join(contextDir, 'Dockerfile'), 'utf8');
  const { text, bases } = aliasFromLines(original, aliases);
  // A base image rebuilt locally (same name, new id) must rebuild what stands on it.
  const baseIds: Record<string, string> = {};
  for (const base of bases) {
    if (!/^[a-z0-9]/i.test(base) || base.toLowerCase() === 'scratch' || base.includes('$')) continue;
    await provider.ensureImage(base, { aliasHint: BASE_HINT });
    baseIds[base] = String((await docker.getImage(base).inspect()).Id);
  }
  const files = await readContextFiles(contextDir);
  const tag = imageTagForHash(imageContentHash({ files, aliases: { ...aliases }, buildSettings: { dockerfile: 'Dockerfile', baseIds } }));
  let buildDir = contextDir;
  if (text !== original) {
    buildDir = mkdtempSync(join(tmpdir(), 'berth-build-'));
    cpSync(contextDir, buildDir, { recursive: true });
    writeFileSync(join(buildDir, 'Dockerfile'), text);
  }
  try {
    const result = await provider.buildImage({ contextDir: buildDir, tag });
    return { image: tag, config: await inspectConfig(docker, tag), built: result.built };
  } finally {
    if (buildDir !== contextDir && existsSync(buildDir)) rmSync(buildDir, { recursive: true, force: true });
  }
}
