// An episode's token files (docs/training.md, Tokens) for a trainer on any machine: read from this machine's disk when
// the episode's logs folder is here, else from the results store, each checked against the attempt's manifest. So
// `berth serve` answers /run and a group's tokens after the worker host that ran the episode is gone.
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { StoreLocation } from '../config/results-store.ts';
import { attemptKey, readAttemptFile, readManifest, type Manifest, type ResultsStore } from '../store/index.ts';
import { parseTokenRecords, TOKEN_ROLLOUT_FILE } from '../tokens/index.ts';
import type { Group, SampleRow, TokenRolloutFile } from '../rollouts/types.ts';

/** The store a reader opens from its berth.toml (for berth serve, which reaches the store through this layer). */
export { openStore, type ResultsStore } from '../store/index.ts';

/** What locates one episode attempt's files. */
export interface EpisodeFilesRef {
  batchId: string;
  workflowId: string;
  /** The logs folder on the host that ran it (its last part is the attempt's run id). */
  logsDir: string | null;
  /** The attempt's folder in the store, when the row names it (ResultRow.store_key). */
  storeKey?: string;
}

/**
 * The attempt's folder in the store: the row's store_key, else the key its host uploaded it under (the batch, the
 * workflow id and the run id that ends its logs folder, as src/host/logs.ts names it). Null when neither is known.
 */
export function storedAttemptOf(loc: Pick<StoreLocation, 'prefix'>, ref: EpisodeFilesRef): string | null {
  if (ref.storeKey) return ref.storeKey;
  const runId = ref.logsDir ? basename(ref.logsDir.replace(/\/+$/, '')) : '';
  return runId ? attemptKey(loc, ref.batchId, ref.workflowId, runId) : null;
}

/** A file read, or why it could not be: the file is neither on this machine nor in the store. */
export type EpisodeFileRead = { text: string; from: 'here' | 'store' } | { missing: string };

/** Errors that mean "not readable here" (absent, or not this process's to read), so the store is asked instead. */
const NOT_HERE = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM']);

async function readHere(dir: string | null, name: string): Promise<string | null> {
  if (!dir) return null;
  try {
    return await readFile(join(dir, name), 'utf8');
  } catch (err) {
    if (NOT_HERE.has((err as NodeJS.ErrnoException).code ?? '')) return null;
    throw err;
  }
}

/** The named files of one attempt (paths relative to its logs folder), each from here or else from the store. */
export async function readEpisodeFiles(ref: EpisodeFilesRef, names: readonly string[], store: ResultsStore | null): Promise<Map<string, EpisodeFileRead>> {
  const out = new Map<string, EpisodeFileRead>();
  let manifest: Manifest | null | undefined;
  for (const name of names) {
    const here = await readHere(ref.logsDir, name);
    if (here !== null) {
      out.set(name, { text: here, from: 'here' });
      continue;
    }
    const where = ref.logsDir ? `not on this machine (${join(ref.logsDir, name)})` : 'not on this machine (the row names no logs folder)';
    if (!store) {
      out.set(name, { missing: `${name} of ${ref.workflowId} is ${where}, and berth.toml names no results store to read it from ([results] store; docs/deployment.md, A results store)` });
      continue;
    }
    const attempt = storedAttemptOf(store.settings, ref);
    if (attempt && manifest === undefined) manifest = await readManifest(store, attempt);
    const bytes = attempt ? await readAttemptFile(store, attempt, name, manifest ?? null) : null;
    if (bytes === null) {
      out.set(name, { missing: `${name} of ${ref.workflowId} is ${where}, and ${store.settings.url} has no whole attempt with it${attempt ? ` (${attempt})` : ''}: the upload failed or has not finished (the row's store_error says why)` });
      continue;
    }
    out.set(name, { text: bytes.toString('utf8'), from: 'store' });
  }
  return out;
}

/** What a row carries when a trainer asks for its tokens inline. */
export type SampleTokens = Required<Pick<SampleRow, 'token_records' | 'token_rollout'>> & Pick<SampleRow, 'tokens_error'>;

/** The sample's token records and linked sequences, from here or the store; none for a sample without tokens. */
export async function sampleTokens(row: SampleRow, batchId: string, store: ResultsStore | null): Promise<SampleTokens> {
  const recordsFile = row.training?.tokens;
  if (!recordsFile || !row.workflow_id) return { token_records: null, token_rollout: null };
  const ref = { batchId, workflowId: row.workflow_id, logsDir: row.logs_dir };
  let read: Map<string, EpisodeFileRead>;
  try {
    read = await readEpisodeFiles(ref, [recordsFile, TOKEN_ROLLOUT_FILE], store);
  } catch (err) {
    // The store is down, or holds a file that does not match its manifest: said on the row (the group is not
    // acknowledged yet, so the trainer can read it again), not a broken stream.
    return { token_records: null, token_rollout: null, tokens_error: `reading the tokens of ${row.workflow_id}: ${(err as Error).message}` };
  }
  const records = read.get(recordsFile)!;
  if ('missing' in records) return { token_records: null, token_rollout: null, tokens_error: records.missing };
  const rollout = read.get(TOKEN_ROLLOUT_FILE)!;
  return {
    token_records: parseTokenRecords(records.text),
    token_rollout: 'text' in rollout ? JSON.parse(rollout.text) as TokenRolloutFile : null,
  };
}

/** The group with each row's tokens inline (`GET /runs/<key>/groups?tokens=1`). */
export async function groupWithTokens(group: Group, batchId: string, store: ResultsStore | null): Promise<Group> {
  const rows = await Promise.all(group.rows.map(async (r) => ({ ...r, ...await sampleTokens(r, batchId, store) })));
  return { ...group, rows };
}
