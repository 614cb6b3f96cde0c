// An episode attempt's files in the store: uploaded from the host's logs folder file by file, the manifest last; read
// back into a folder only when the manifest is there, each file checked against it.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, lstatSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileKey, JOB_FILES, jobFileKey, manifestKey } from './keys.ts';
import { notHeld, parseManifest, type Manifest, type ManifestFile } from './manifest.ts';
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
 * Uploads every file of `dir` under the attempt's key, then its manifest. A retry uploads them all again to the same
 * keys; until the manifest is written, readers see no attempt at all.
 */
export async function uploadAttempt(store: ResultsStore, attempt: string, dir: string, ids: AttemptIds,
  progress?: (file: string, bytes: number) => void): Promise<Manifest> {
  const paths = filesUnder(dir).filter((p) => fileKey(attempt, p) !== null);
  const files: ManifestFile[] = new Array<ManifestFile>(paths.length);
  // A few files at a time: a trial is mostly small files, each a round trip of its own.
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(UPLOADS_AT_ONCE, paths.length) }, async () => {
    while (next < paths.length) {
      const i = next++;
      const path = paths[i]!;
      const { size, sha256 } = await store.putFile(fileKey(attempt, path)!, join(dir, path), (n) => progress?.(path, n));
      files[i] = { path, size, sha256 };
    }
  }));
  const manifest: Manifest = { version: 1, ...ids, files, writtenAt: new Date().toISOString() };
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
      const got = await store.getFile(key, join(dir, to)).catch((err: unknown) => { next = wanted.length; throw err; });
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
  const bytes = await store.getBytes(key);
  if (bytes === null) throw new Error(`${key} is in the manifest of ${attempt} but not in the store`);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== entry.sha256 || bytes.length !== entry.size) {
    throw new Error(`${key} in the store does not match its manifest (sha256 ${sha256}, ${bytes.length} bytes; expected ${entry.sha256}, ${entry.size} bytes)`);
  }
  return bytes;
}

/** Writes the job files present in `dir` (config.json, result.json, rollouts.jsonl, metrics.json, skipped.json) to the store. */
export async function uploadJobFiles(store: ResultsStore, batchId: string, dir: string): Promise<number> {
  let n = 0;
  for (const name of JOB_FILES) {
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
