// storeEpisodeFiles: the host that ran an episode attempt uploads its logs folder to the results store as the episode
// closes (docs/deployment.md, A results store). The store's settings and credentials are read here, on the host, from
// its berth.toml and environment: the workflow passes only the store's URL, so no credential enters Temporal's history.
// A retry (the activity's retry policy) uploads the folder again to the same keys; the manifest is written last.
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { storeLocationOf } from '../config/results-store.ts';
import { episodeLogsDir } from '../host/logs.ts';
import type { HostServices } from '../host/deps.ts';
import { attemptKey, totalBytes, uploadAttempt } from '../store/index.ts';
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
    if (here && !here.keepLocal) await rm(dir, { recursive: true, force: true });
    return { key: attempt, files: manifest.files.length, bytes: totalBytes(manifest), keptLocal: !(here && !here.keepLocal) };
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
