import { createHash } from 'node:crypto';
import type { ResultRow } from '../workflows/types.ts';

/**
 * The episode page of a row, relative to the batch page: readable (task, repeat, attempt) and unique (a hash of the
 * workflow id, since a task id may hold characters a file name cannot).
 */
export function episodePagePath(row: Pick<ResultRow, 'task_id' | 'repeat' | 'attempt' | 'workflow_id'>): string {
  const readable = row.task_id.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[.-]+/, '').slice(0, 60);
  const hash = createHash('sha256').update(row.workflow_id).digest('hex').slice(0, 8);
  return `episodes/${readable || 'task'}-r${row.repeat}-a${row.attempt}-${hash}.html`;
}
