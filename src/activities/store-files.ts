// storeEpisodeFiles: the host that ran an episode attempt uploads its logs folder to the results store as the episode
// closes (docs/deployment.md, A results store). The store's settings and credentials are read here, on the host, from
// its berth.toml and environment: the workflow passes only the store's URL, so no credential enters Temporal's history.
// A retry (the activity's retry policy) uploads the folder again to the same keys; the manifest is written last.
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { storeLocationOf } from '../config/results-store.ts';
import { episodeLogsDir } from '../host/logs.ts';
import type { HostServices } from '../host/deps.ts';
import { attemptKey, filesUnder, totalBytes, uploadAttempt } from '../store/index.ts';
import { hostStore } from './store-client.ts';
import type { StoreEpisodeFilesRequest, StoredEpisodeFiles } from './types.ts';

/** S3 errors no retry changes: the bucket is missing, or the credentials are wrong or not allowed. */
const REFUSALS = new Set(['NoSuchBucket', 'AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidBucketName', 'AllAccessDisabled']);

/** An error's text with every credential value cut out (an S3 error may quote what it was sent). */
export function withoutSecrets(text: string, secrets: Array<string | undefined>): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[secret]');
  return out;
}

export async function storeEpisodeFiles(deps: HostServices, req: StoreEpisodeFilesRequest): Promise<StoredEpisodeFiles> {
  return uploadEpisodeFolder(deps, req);
}

/** Trials at most this large go up inside the last verification (storeInline); larger ones in storeEpisodeFiles. */
export const INLINE_MAX_BYTES = 64 * 1024 * 1024;
/** The longest an inline upload may hold the last verification; past it the episode's own upload activity takes over. */
const INLINE_MAX_MS = 60_000;
/** Time the verification keeps in hand after an inline upload, within its own limit. */
const INLINE_MARGIN_MS = 15_000;

/**
 * The attempt's files uploaded inside the last verification (patch store-in-last-verify), saving the episode an
 * activity and two workflow tasks. Only a small folder, and only within the verification's own time limit: answers
 * undefined whenever it does not finish (too large, too slow, the store failing), and the episode's storeEpisodeFiles
 * activity, with its retry policy, uploads the attempt instead. An upload left running past its bound removes nothing
 * from this host.
 */
export async function storeInline(deps: HostServices, req: StoreEpisodeFilesRequest, activityLeftMs: number): Promise<StoredEpisodeFiles | undefined> {
  const bound = Math.min(INLINE_MAX_MS, activityLeftMs - INLINE_MARGIN_MS);
  const dir = episodeLogsDir(req.workflowId, req.runId);
  if (bound < 1000 || !existsSync(dir) || folderBytes(dir) > INLINE_MAX_BYTES) return undefined;
  // With keep_local = false the upload removes the folder, and with it the verification's outcome record
  // (final-verify.ts) that a retried verification would read: that upload waits for the episode's own activity.
  if (hostStore(req.store).here?.keepLocal === false) return undefined;
  const state = { abandoned: false };
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => { timer = setTimeout(() => { state.abandoned = true; resolve(undefined); }, bound); });
  try {
    return await Promise.race([uploadEpisodeFolder(deps, req, state).catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** An attempt at most this large is a request or a few (src/store/episode-files.ts: small files inside the manifest). */
export const QUICK_UPLOAD_BYTES = 1024 * 1024;

/** Whether the attempt's folder is on this host and small enough to go up in a request or a few. */
export function quickUpload(req: StoreEpisodeFilesRequest): boolean {
  const dir = episodeLogsDir(req.workflowId, req.runId);
  return existsSync(dir) && folderBytes(dir) <= QUICK_UPLOAD_BYTES;
}

const folderBytes = (dir: string): number => filesUnder(dir).reduce((n, p) => n + statSync(join(dir, p)).size, 0);

async function uploadEpisodeFolder(deps: HostServices, req: StoreEpisodeFilesRequest, inline?: { abandoned: boolean }): Promise<StoredEpisodeFiles> {
  const location = storeLocationOf(req.store);
  const dir = episodeLogsDir(req.workflowId, req.runId);
  const attempt = attemptKey(location, req.batchId, req.workflowId, req.runId);
  if (!existsSync(dir)) {
    throw ApplicationFailure.nonRetryable(`${dir} is not on ${deps.identity.host}: the episode's files were never written here, or were removed`, 'berth:store_no_files');
  }
  // The batch says where (bucket and prefix); this host's berth.toml says how to reach it (endpoint, region, keys).
  const { store, here, credentials } = hostStore(req.store);
  let sent = 0;
  const beat = setInterval(() => heartbeat({ bytes: sent }), 5000);
  try {
    const manifest = await uploadAttempt(store, attempt, dir, { batchId: req.batchId, workflowId: req.workflowId, runId: req.runId, host: deps.identity.host },
      (_file, n) => { sent += n; });
    // Nothing leaves this host's disk before the store holds the whole attempt (its manifest written).
    const remove = here && !here.keepLocal && !inline?.abandoned;
    if (remove) await rm(dir, { recursive: true, force: true });
    return { key: attempt, files: manifest.files.length, bytes: totalBytes(manifest), keptLocal: !remove };
  } catch (err) {
    if (err instanceof ApplicationFailure) throw err;
    const e = err as Error;
    const message = withoutSecrets(`uploading ${dir} to ${req.store}: ${e.name}: ${e.message}`,
      [credentials?.secretAccessKey, credentials?.accessKeyId, credentials?.sessionToken]);
    // The store refused who we are or where we write: another attempt would be refused the same way.
    if (REFUSALS.has(e.name)) throw ApplicationFailure.nonRetryable(`${message} (fix [results] or the store's credentials on ${deps.identity.host}; docs/deployment.md, A results store)`, 'berth:store_refused');
    throw ApplicationFailure.retryable(message, 'berth:store_upload');
  } finally {
    clearInterval(beat);
  }
}
