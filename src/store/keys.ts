// Where a batch's objects sit in the store, pure (docs/deployment.md, A results store):
//   <prefix>/<batch>/job/<config.json | result.json | rollouts.jsonl | metrics.json | skipped.json>
//   <prefix>/<batch>/episodes/<workflow id, made safe>/<run id>/files/<path in the episode's logs folder>
//   <prefix>/<batch>/episodes/<workflow id, made safe>/<run id>/manifest.json   (written last: no manifest, no trial)
// A key depends only on the batch, the attempt and the path, so a retried upload rewrites the same objects.
import type { StoreLocation } from '../config/results-store.ts';

/** The batch's job files the store keeps beside its episodes. */
export const JOB_FILES = ['config.json', 'result.json', 'rollouts.jsonl', 'metrics.json', 'skipped.json'] as const;
export type JobFileName = (typeof JOB_FILES)[number];

export const MANIFEST = 'manifest.json';

/** A workflow id as one path part (as the host names its logs folder). */
export const safePart = (id: string): string => id.replace(/[^A-Za-z0-9_.-]+/g, '_');

const under = (loc: Pick<StoreLocation, 'prefix'>, ...parts: string[]): string => [loc.prefix, ...parts].filter((p) => p !== '').join('/');

/** Every object of the batch starts with this (with its trailing slash, so batch "a" never lists batch "ab"). */
export const batchPrefix = (loc: Pick<StoreLocation, 'prefix'>, batchId: string): string => `${under(loc, safePart(batchId))}/`;

export const jobFileKey = (loc: Pick<StoreLocation, 'prefix'>, batchId: string, name: JobFileName): string =>
  under(loc, safePart(batchId), 'job', name);

/** The attempt's folder in the store (no trailing slash). */
export const attemptKey = (loc: Pick<StoreLocation, 'prefix'>, batchId: string, workflowId: string, runId: string): string =>
  under(loc, safePart(batchId), 'episodes', safePart(workflowId), safePart(runId));

export const manifestKey = (attempt: string): string => `${attempt}/${MANIFEST}`;

/** The object of one file of the attempt; null for a path that would leave the attempt's folder. */
export function fileKey(attempt: string, path: string): string | null {
  const parts = path.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) return null;
  return `${attempt}/files/${parts.join('/')}`;
}
