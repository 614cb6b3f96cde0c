// Episode files where a sandbox queue is shared by workers on several machines (a cluster; docs/kubernetes.md,
// Episode files without shared storage). The worker that seeded an episode keeps its folder and serves it on its
// files queue. Another worker that runs one of the episode's activities brings the folder from there first, works
// on a copy under its own BERTH_HOME, then sends the copy back and removes it: the next activity, on any worker,
// finds every file, and the client finds them all on the keeper.
import { Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { promisify } from 'node:util';
import { fetchHostFolder, HOST_ARCHIVE_CHUNK_MAX } from '../config/transfer.ts';
import { homePath } from '../config/paths.ts';
import { beating } from './beating.ts';
import { unpackArchive } from './host-files.ts';
import type { HostLease, SandboxRef } from './types.ts';

const run = promisify(execFile);

/** How long a keeper may take to pick a call up before it counts as gone (as hostFilesPutWorkflow's). */
const KEEPER_WAIT_SEC = 15;
/** How long a keeper that did not answer is left alone before it is asked again (its worker may come back). */
const UNREACHABLE_MS = 2 * 60_000;

/** This worker's own folder for an episode whose logs folder is `dir` on its keeper: the same place under this BERTH_HOME. */
export const localEpisodeDir = (dir: string): string => homePath('episodes', basename(dirname(dir)), basename(dir));

export class EpisodeFilesHome {
  private readonly unreachable = new Map<string, number>();

  constructor(private readonly identity: HostLease, private readonly workflowQueue: string) {}

  /** Runs `work` on the episode's files: here when this worker keeps them, else on a copy brought from the keeper. */
  async around<R>(sandbox: SandboxRef, work: (here: SandboxRef) => Promise<R>): Promise<R> {
    const keeper = sandbox.filesQueue;
    if (!keeper || keeper === this.identity.filesQueue) return work(sandbox);
    const local = localEpisodeDir(sandbox.logsDir);
    const client = Context.current().client;
    await beating(() => this.bring(client, keeper, sandbox.logsDir, local));
    try {
      return await work({ ...sandbox, logsDir: local });
    } finally {
      await beating(() => this.sendBack(client, keeper, sandbox.logsDir, local));
    }
  }

  private reachable(keeper: string): boolean {
    const since = this.unreachable.get(keeper);
    if (since === undefined) return true;
    if (Date.now() - since < UNREACHABLE_MS) return false;
    this.unreachable.delete(keeper);
    return true;
  }

  private gone(keeper: string, what: string, err: unknown): void {
    this.unreachable.set(keeper, Date.now());
    log.warn(`berth worker: the worker keeping episode files on ${keeper} did not answer (${what}: ${(err as Error).message}); ` +
      `this worker keeps what it writes for now, under ${homePath('episodes')}`);
  }

  private async bring(client: Client, keeper: string, dir: string, local: string): Promise<void> {
    if (!this.reachable(keeper)) return;
    const got = await fetchHostFolder(client, { queue: keeper, taskQueue: this.workflowQueue, dir, waitSec: KEEPER_WAIT_SEC }).catch((err: unknown) => {
      this.gone(keeper, `bringing ${dir}`, err);
      return null;
    });
    if (got === null || !Buffer.isBuffer(got)) return;
    await unpackArchive(got, local);
  }

  private async sendBack(client: Client, keeper: string, dir: string, local: string): Promise<void> {
    if (!existsSync(local) || readdirSync(local).length === 0 || !this.reachable(keeper)) return;
    try {
      const { stdout } = await run('tar', ['-C', local, '-cf', '-', '.'], { encoding: 'buffer', maxBuffer: 1024 ** 3 });
      const sha256 = createHash('sha256').update(stdout).digest('hex');
      for (let offset = 0; offset < stdout.length; offset += HOST_ARCHIVE_CHUNK_MAX) {
        const data = stdout.subarray(offset, offset + HOST_ARCHIVE_CHUNK_MAX).toString('base64');
        await client.workflow.execute('hostFilesPutWorkflow', {
          taskQueue: this.workflowQueue, workflowId: `berth-files-put/${randomBytes(6).toString('hex')}`,
          args: [{ queue: keeper, dir, offset, total: stdout.length, sha256, data }], staticSummary: `files of ${dir} to ${keeper}`,
        });
      }
      await rm(local, { recursive: true, force: true });
    } catch (err) {
      this.gone(keeper, `sending ${dir}`, err);
    }
  }
}
