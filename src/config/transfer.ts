// Moving files between hosts (docs/deployment.md, Moving files): a folder on the host that holds it arrives as a tar
// archive, a bounded chunk per call of the host's `hostArchiveChunk` activity, carried by hostArchiveWorkflow. The
// client uses it, and so does a worker that works on an episode another worker keeps (src/activities/files-home.ts).
import type { Client } from '@temporalio/client';
import { createHash, randomBytes } from 'node:crypto';

/** The largest chunk a host hands out of a folder's archive per call: well under Temporal's payload limit. */
export const HOST_ARCHIVE_CHUNK_MAX = 1024 * 1024;

export interface HostArchiveChunk {
  /** The archive's bytes from `offset`, base64. */
  data: string;
  offset: number;
  /** The whole archive's size: the caller asks again from offset + bytes until it has them all. */
  total: number;
  /** SHA-256 of the whole archive (hex): the caller passes it back for the next chunk, and checks what it got. */
  sha256: string;
  /** Set when the folder is not on this host (removed, or never made): no data. */
  missing?: string;
}

export interface HostFolder {
  /** The host's sandbox queue (where its activities run). */
  queue: string;
  /** A shared queue a worker polls (it runs the carrying workflow). */
  taskQueue: string;
  dir: string;
  /** How long the host may take to pick the call up before it counts as gone (default 60 s). */
  waitSec?: number;
}

/** The folder as a tar archive, or why it could not be had. */
export async function fetchHostFolder(client: Client, f: HostFolder, chunkBytes = HOST_ARCHIVE_CHUNK_MAX): Promise<Buffer | { missing: string }> {
  const call = (offset: number, sha256?: string) => client.workflow.execute('hostArchiveWorkflow', {
    taskQueue: f.taskQueue, workflowId: `berth-files/${randomBytes(6).toString('hex')}`,
    args: [{ queue: f.queue, dir: f.dir, offset, length: chunkBytes, ...(sha256 ? { sha256 } : {}), ...(f.waitSec ? { waitSec: f.waitSec } : {}) }],
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
