// The client's side of moving files (docs/deployment.md, Moving files): a folder on the host that holds it arrives as
// a tar archive, a bounded chunk per call of the host's `hostArchiveChunk` activity, carried by hostArchiveWorkflow.
import type { Client } from '@temporalio/client';
import { createHash, randomBytes } from 'node:crypto';
import { HOST_ARCHIVE_CHUNK_MAX } from '../config/transfer.ts';
import type { HostArchiveChunk } from '../workflows/types.ts';

export interface HostFolder {
  /** The host's sandbox queue (where its activities run). */
  queue: string;
  /** A shared queue a worker polls (it runs the carrying workflow). */
  taskQueue: string;
  dir: string;
}

/** The folder as a tar archive, or why it could not be had. */
export async function fetchHostFolder(client: Client, f: HostFolder, chunkBytes = HOST_ARCHIVE_CHUNK_MAX): Promise<Buffer | { missing: string }> {
  const call = (offset: number, sha256?: string) => client.workflow.execute('hostArchiveWorkflow', {
    taskQueue: f.taskQueue, workflowId: `berth-files/${randomBytes(6).toString('hex')}`,
    args: [{ queue: f.queue, dir: f.dir, offset, length: chunkBytes, ...(sha256 ? { sha256 } : {}) }],
    staticSummary: `files of ${f.dir} from ${f.queue}`,
  }) as Promise<HostArchiveChunk>;
  const first = await call(0);
  if (first.missing) return { missing: first.missing };
  const parts = [Buffer.from(first.data, 'base64')];
  let have = parts[0]!.length;
  while (have < first.total) {
    const next = await call(have, first.sha256);
    if (next.sha256 !== first.sha256) return fetchHostFolder(client, f, chunkBytes);
    const buf = Buffer.from(next.data, 'base64');
    if (buf.length === 0) throw new Error(`${f.queue} sent no bytes of ${f.dir} at offset ${have} of ${first.total}`);
    parts.push(buf);
    have += buf.length;
  }
  const archive = Buffer.concat(parts);
  const sha = createHash('sha256').update(archive).digest('hex');
  if (sha !== first.sha256) throw new Error(`the archive of ${f.dir} from ${f.queue} arrived damaged (sha256 ${sha}, expected ${first.sha256})`);
  return archive;
}
