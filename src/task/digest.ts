// Task digests (Task Folder Format § Task folder layout; what is covered:
// NeMo Gym 0.7 section 7). A digest covers the task folder's files, the dataset
// settings that apply to the task, and the dataset verifier.py when it grades the task.
import { createHash } from 'node:crypto';
import type { TaskSnapshot } from './snapshot.ts';

export interface DigestExtras {
  /** Canonical dataset settings for this task, or null when dataset.toml sets nothing that applies. */
  datasetSettings?: unknown;
  /** Hex SHA-256 of the dataset root's verifier.py when it grades this task. */
  datasetVerifierSha256?: string | null;
}

/** JSON with sorted keys, so equal settings always hash the same. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** `sha256:<hex>` over sorted "path NUL file-sha256 LF" records, then the dataset parts. */
export function computeTaskDigest(snapshot: Pick<TaskSnapshot, 'files'>, extras: DigestExtras = {}): string {
  const h = createHash('sha256');
  const paths = [...snapshot.files.keys()].sort();
  for (const p of paths) h.update(`${p}\0${snapshot.files.get(p)!.sha256}\n`);
  if (extras.datasetSettings !== undefined && extras.datasetSettings !== null) {
    h.update(`\0dataset.toml\0${canonicalJson(extras.datasetSettings)}\n`);
  }
  if (extras.datasetVerifierSha256) h.update(`\0verifier.py\0${extras.datasetVerifierSha256}\n`);
  return `sha256:${h.digest('hex')}`;
}

export interface DigestMoved {
  ok: false;
  code: 'digest_moved';
  task_id: string;
  path: string;
  expected: string;
  actual: string;
  reason: string;
  stage: 'load';
}

export type DigestCheck = { ok: true } | DigestMoved;

/**
 * Compares the digest a batch recorded with the task as it is now. A moved digest means the folder,
 * its dataset settings or the dataset verifier.py changed after the batch started.
 */
export function checkDigest(
  expected: string,
  current: { id: string; path: string; digest: string },
): DigestCheck {
  if (expected === current.digest) return { ok: true };
  return {
    ok: false,
    code: 'digest_moved',
    task_id: current.id,
    path: current.path,
    expected,
    actual: current.digest,
    stage: 'load',
    reason:
      `${current.path}: task ${current.id} changed since its batch started (digest ${expected} is now ${current.digest}). ` +
      `Fix: undo the edit to the task folder, its dataset.toml settings or the dataset verifier.py, ` +
      `or start a new batch so every episode runs the edited task.`,
  };
}
