import { createHash } from 'node:crypto';
import type { SandboxRole } from './types.ts';

export const LABEL_BATCH = 'berth.batch';
export const LABEL_WORKFLOW = 'berth.workflow';
export const LABEL_ROLE = 'berth.role';
export const LABEL_USER = 'berth.user';
export const LABEL_WORKDIR = 'berth.workdir';
/** A warm pool's sandbox (docs/performance-notes.md, The warm pool): its host queue, its worker process and its seed key. */
export const LABEL_POOL = 'berth.pool';
export const LABEL_POOL_OWNER = 'berth.pool.owner';
export const LABEL_POOL_KEY = 'berth.pool.key';
/** A pooled sandbox is named so until an episode claims it (renamed to that episode's containerName). */
export const POOL_NAME_PREFIX = 'berth-pool-';

const READABLE_MAX = 80;

/**
 * A valid, deterministic Docker container name for one sandbox of one workflow run.
 * Docker names allow [a-zA-Z0-9][a-zA-Z0-9_.-]*; the readable part is sanitized and truncated,
 * so a hash of the exact inputs keeps distinct runs distinct.
 */
export function containerName(workflowId: string, runId: string, role: SandboxRole): string {
  const hash = createHash('sha256').update(`${workflowId}\0${runId}\0${role}`).digest('hex').slice(0, 12);
  const readable = workflowId
    .replace(/^berth\//, '')
    .replace(/[^a-zA-Z0-9_.-]+/g, '-')
    .replace(/^[^a-zA-Z0-9]+/, '')
    .slice(0, READABLE_MAX)
    .replace(/[-.]+$/, '');
  return ['berth', readable, role, hash].filter((p) => p.length > 0).join('-');
}

/** Quote a string for a POSIX shell. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
