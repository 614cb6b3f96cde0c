// An episode attempt's files in the store: the larger ones uploaded from the host's logs folder file by file, the small
// ones inside the manifest, which goes last; read back into a folder only when the manifest is there, each file checked
// against it.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, lstatSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileKey, JOB_FILES, jobFileKey, manifestKey, type JobFileName } from './keys.ts';
import { inlineBytes, notHeld, parseManifest, type Manifest, type ManifestFile } from './manifest.ts';
import type { ResultsStore } from './s3.ts';

/** Regular files under `dir`, '/'-separated relative paths, sorted (links and special files are not results). */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.push(relative(dir, p).split(sep).join('/'));
    }
  };
  walk(dir);
  return out;
}

/** Whether `dir` on this disk holds every file of the attempt's manifest, each as large as the store's copy. */
export function holdsManifest(dir: string, manifest: Manifest): boolean {
  if (!existsSync(dir)) return false;
  return notHeld(manifest, (path) => {
    const st = statSync(join(dir, path), { throwIfNoEntry: false });
    return st?.isFile() ? st.size : null;
  }).length === 0;
}

/** Files of one attempt uploaded (or downloaded) at once (each large upload also sends up to 4 parts at once). */
export const UPLOADS_AT_ONCE = 4;

export interface AttemptIds {
  batchId: string;
  workflowId: string;
  runId: string;
  host: string;
}

/**
 * Files at most this large ride inside the manifest, up to INLINE_TOTAL_BYTES in all: each object is a request for
 * the worker and the store alike, and a trial is mostly a few small files (a trivial one is a single PUT).
 */
export const INLINE_FILE_BYTES = 32 * 1024;
export const INLINE_TOTAL_BYTES = 256 * 1024;

/** Which of these files (paths with sizes, in order) go inside the manifest: the small ones, first come, within the total. */
export function inlinePaths(files: { path: string; size: number }[]): Set<string> {
  const inline = new Set<string>();
  let total = 0;
  for (const f of files) {
    if (f.size > INLINE_FILE_BYTES || total + f.size > INLINE_TOTAL_BYTES) continue;
    inline.add(f.path);
    total += f.size;
  }
  return inline;
}

/**
 * Uploads every larger file of `dir` under the attempt's key, then its manifest with the small files in it. A retry
 * uploads them all again to the same keys; until the manifest is written, readers see no attempt at all.
 */
export async function uploadAttempt(store: ResultsStore, attempt: string, dir: string, ids: AttemptIds,
  progress?: (file: string, bytes: number) => void): Promise<Manifest> {
  const paths = filesUnder(dir).filter((p) => fileKey(attempt, p) !== null);
  const inline = inlinePaths(paths.map((path) => ({ path, size: statSync(join(dir, path)).size })));
  const files: ManifestFile[] = new Array<ManifestFile>(paths.length);
  // A few files at a time: each larger file is a round trip of its own.
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(UPLOADS_AT_ONCE, paths.length) }, async () => {
    while (next < paths.length) {
      const i = next++;
      const path = paths[i]!;
      if (inline.has(path)) {
        const bytes = await readFile(join(dir, path));
        files[i] = { path, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), inline: bytes.toString('base64') };
        progress?.(path, bytes.length);
        continue;
      }
      const { size, sha256 } = await store.putFile(fileKey(attempt, path)!, join(dir, path), (n) => progress?.(path, n));
      files[i] = { path, size, sha256 };
    }
  }));
  const version = files.some((f) => f.inline !== undefined) ? 2 : 1;
  const manifest: Manifest = { version, ...ids, files, writtenAt: new Date().toISOString() };
  await store.putText(manifestKey(attempt), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** The attempt's manifest, or null when the store has no whole attempt (never uploaded, or cut short before its manifest). */
export async function readManifest(store: ResultsStore, attempt: string): Promise<Manifest | null> {
  const text = await store.getText(manifestKey(attempt));
  if (text === null) return null;
  const m = parseManifest(text);
  return 'invalid' in m ? null : m;
}

/**
 * Writes the attempt's files into `dir` (each at `place(path)`, or skipped when it answers null), checking each against
 * the manifest (`known` when the caller has just read it), a few at once. Answers the manifest, or null when the store
 * has no whole attempt.
 */
export async function downloadAttempt(store: ResultsStore, attempt: string, dir: string,
  place: (path: string) => string | null = (p) => p, known?: Manifest): Promise<Manifest | null> {
  const manifest = known ?? await readManifest(store, attempt);
  if (!manifest) return null;
  const wanted = manifest.files.flatMap((f) => {
    const key = fileKey(attempt, f.path);
    const to = place(f.path);
    return key && to !== null ? [{ f, key, to }] : [];
  });
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(UPLOADS_AT_ONCE, wanted.length) }, async () => {
    while (next < wanted.length) {
      const { f, key, to } = wanted[next++]!;
      const held = inlineBytes(f);
      const got = held ? await writeWhole(join(dir, to), held) : await store.getFile(key, join(dir, to)).catch((err: unknown) => { next = wanted.length; throw err; });
      if (got.sha256 !== f.sha256 || got.size !== f.size) {
        next = wanted.length;
        throw new Error(`${key} in the store does not match its manifest (sha256 ${got.sha256}, ${got.size} bytes; expected ${f.sha256}, ${f.size} bytes)`);
      }
    }
  }));
  return manifest;
}

/**
 * One file of the attempt, whole, checked against the manifest: null when the store has no whole attempt or the
 * manifest lists no such file; an error when the object is missing or differs from what the manifest says.
 */
export async function readAttemptFile(store: ResultsStore, attempt: string, path: string, manifest?: Manifest | null): Promise<Buffer | null> {
  const m = manifest === undefined ? await readManifest(store, attempt) : manifest;
  const entry = m?.files.find((f) => f.path === path);
  const key = fileKey(attempt, path);
  if (!entry || !key) return null;
  const bytes = inlineBytes(entry) ?? await store.getBytes(key);
  if (bytes === null) throw new Error(`${key} is in the manifest of ${attempt} but not in the store`);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== entry.sha256 || bytes.length !== entry.size) {
    throw new Error(`${key} in the store does not match its manifest (sha256 ${sha256}, ${bytes.length} bytes; expected ${entry.sha256}, ${entry.size} bytes)`);
  }
  return bytes;
}

/** Writes bytes held in a manifest to `path` whole (a temporary file renamed, as a download is); answers what it wrote. */
async function writeWhole(path: string, bytes: Buffer): Promise<{ size: number; sha256: string }> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.part`;
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Writes the job files present in `dir` (config.json, result.json, rollouts.jsonl, metrics.json, skipped.json) to the store. */
export async function uploadJobFiles(store: ResultsStore, batchId: string, dir: string, names: readonly JobFileName[] = JOB_FILES): Promise<number> {
  let n = 0;
  for (const name of names) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    await store.putFile(jobFileKey(store.settings, batchId, name), path);
    n++;
  }
  return n;
}

/** The batch's job files from the store into `dir` (those it has); answers their names. */
export async function downloadJobFiles(store: ResultsStore, batchId: string, dir: string): Promise<string[]> {
  const got: string[] = [];
  for (const name of JOB_FILES) {
    const key = jobFileKey(store.settings, batchId, name);
    if (await store.getText(key) === null) continue;
    await store.getFile(key, join(dir, name));
    got.push(name);
  }
  return got;
}
