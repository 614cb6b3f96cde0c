// An attempt's manifest: every file the store holds of it, with its size and SHA-256. It is written after every file,
// so a reader that finds none treats the attempt as absent, and one that finds it can check each file it reads. Pure.
// Version 2 carries the attempt's small files in itself (`inline`, base64): a trivial trial is then one PUT, and the
// manifest is still the one object whose presence says the attempt is whole.

export interface ManifestFile {
  /** The path in the episode's logs folder, '/'-separated. */
  path: string;
  size: number;
  sha256: string;
  /** Version 2: the file's bytes, base64, when it is small (no object of its own under files/). */
  inline?: string;
}

export interface Manifest {
  /** 1: every file an object of its own; 2: small files may be inline. */
  version: 1 | 2;
  batchId: string;
  workflowId: string;
  runId: string;
  /** The host that ran the attempt and uploaded its files. */
  host: string;
  files: ManifestFile[];
  /** ISO time the manifest was written. */
  writtenAt: string;
}

const isFile = (f: unknown): f is ManifestFile => {
  const o = f as Partial<ManifestFile> | null;
  return !!o && typeof o.path === 'string' && typeof o.size === 'number' && Number.isInteger(o.size) && o.size >= 0
    && typeof o.sha256 === 'string' && /^[0-9a-f]{64}$/.test(o.sha256)
    && (o.inline === undefined || typeof o.inline === 'string');
};

/** A manifest's text read back, or why it is not one (a reader then treats the attempt as absent). */
export function parseManifest(text: string): Manifest | { invalid: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { invalid: `not JSON (${(err as Error).message})` };
  }
  const m = raw as Partial<Manifest> | null;
  if (!m || (m.version !== 1 && m.version !== 2)) return { invalid: 'not a version 1 or 2 manifest' };
  if (m.version === 1 && Array.isArray(m.files) && m.files.some((f) => (f as Partial<ManifestFile>)?.inline !== undefined)) return { invalid: 'a version 1 manifest with inline files' };
  if (typeof m.workflowId !== 'string' || typeof m.runId !== 'string' || typeof m.batchId !== 'string') return { invalid: 'no batch, workflow or run id' };
  if (!Array.isArray(m.files) || !m.files.every(isFile)) return { invalid: 'a file entry lacks its path, size or sha256' };
  return m as Manifest;
}

export const totalBytes = (m: Pick<Manifest, 'files'>): number => m.files.reduce((n, f) => n + f.size, 0);

/**
 * The manifest's files a folder lacks or holds at another size, by `sizeOf` (a file's size in the folder, or null when
 * it is not there). Empty: the folder holds every file of the attempt, as big as the store's.
 */
export function notHeld(m: Pick<Manifest, 'files'>, sizeOf: (path: string) => number | null): string[] {
  return m.files.filter((f) => f.path.split('/').includes('..') || sizeOf(f.path) !== f.size).map((f) => f.path);
}

/** A file's bytes held in the manifest itself (version 2), or null when it is an object of its own. */
export const inlineBytes = (f: ManifestFile): Buffer | null => (f.inline === undefined ? null : Buffer.from(f.inline, 'base64'));
