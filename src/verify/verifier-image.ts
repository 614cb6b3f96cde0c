// The separate verifier's image (task-folder-verifiers.md § Shared and separate verification): a prebuilt
// reference (aliases already applied by the loader), or tests/ built with tests/Dockerfile as `hb__<hash>-verifier`.
// FROM lines inside tests/Dockerfile go through the alias map here, and the map is part of the hash.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imageContentHash, imageTagForHash, isLossError, readContextFiles, type SandboxProvider } from '../sandbox/index.ts';
import { applyImageAlias, type Task } from '../task/index.ts';
import { transferFailed, VerificationMasked } from './masked.ts';

const BASE_HINT = 'berth-base:bookworm';
const FROM_LINE = /^(\s*FROM\s+)((?:--\S+\s+)*)(\S+)(.*)$/gim;

/** tests/Dockerfile with every FROM image mapped through the aliases; `bases` are the images to have locally. */
export function aliasDockerfileFrom(text: string, aliases: Readonly<Record<string, string>>): { text: string; bases: string[] } {
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
  return { text: out, bases };
}

export interface VerifierImageRef {
  ref: string;
  /** Berth built it, so its configuration is on record. */
  onRecord: boolean;
}

// Hashing reads every file of tests/; a task folder of a given digest hashes the same every turn of every episode.
const tags = new Map<string, string>();

async function verifierTag(task: Task, contextDir: string, aliases: Readonly<Record<string, string>>): Promise<string> {
  const key = JSON.stringify([task.path, task.digest, Object.entries(aliases).sort()]);
  let tag = tags.get(key);
  if (tag === undefined) {
    const files = await readContextFiles(contextDir);
    tag = imageTagForHash(imageContentHash({ files, aliases: { ...aliases }, buildSettings: { dockerfile: 'Dockerfile' } }), '-verifier');
    tags.set(key, tag);
  }
  return tag;
}

export async function resolveVerifierImage(
  provider: SandboxProvider,
  task: Task,
  aliases: Readonly<Record<string, string>>,
): Promise<VerifierImageRef> {
  const image = task.verifier.image;
  if (!image) throw new Error(`task ${task.id} verifies separately but has no verifier image; the loader should have refused it`);
  try {
    if (image.kind === 'prebuilt') {
      await provider.ensureImage(image.ref, { aliasHint: BASE_HINT });
      return { ref: image.ref, onRecord: false };
    }
    const contextDir = join(task.path, image.context);
    const original = await readFile(join(task.path, image.dockerfile), 'utf8');
    const { text, bases } = aliasDockerfileFrom(original, aliases);
    for (const base of new Set(bases)) await provider.ensureImage(base, { aliasHint: BASE_HINT });
    const tag = await verifierTag(task, contextDir, aliases);
    if (text === original) {
      await provider.buildImage({ contextDir, tag });
    } else {
      const buildDir = await mkdtemp(join(tmpdir(), 'berth-verifier-build-'));
      try {
        await cp(contextDir, buildDir, { recursive: true });
        await writeFile(join(buildDir, 'Dockerfile'), text);
        await provider.buildImage({ contextDir: buildDir, tag });
      } finally {
        await rm(buildDir, { recursive: true, force: true });
      }
    }
    return { ref: tag, onRecord: true };
  } catch (err) {
    if (err instanceof VerificationMasked) throw err;
    if (isLossError(err)) throw transferFailed("making the separate verifier's image ready", err);
    const message = err instanceof Error ? err.message : String(err);
    throw new VerificationMasked('harbor:seed_failed', `the separate verifier's image could not be made ready: ${message}`);
  }
}
