// Files leave the host that holds them only through this activity on the host's own queue: a folder is packed into a
// tar archive under BERTH_HOME/exports, named by its content, and handed out a bounded chunk at a time
// (docs/deployment.md, Moving files). Only folders under BERTH_HOME/episodes are served. hostFilesPut is the way in:
// another worker of a shared cluster queue sends an episode folder back to the worker that keeps it (files-home.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { ApplicationFailure } from '@temporalio/activity';
import { homePath } from '../config/paths.ts';
import { HOST_ARCHIVE_CHUNK_MAX } from '../config/transfer.ts';
import type { HostArchiveChunk, HostArchiveRequest, HostFilesPut } from './types.ts';

const run = promisify(execFile);

/** The folders this activity serves: each episode's logs. */
export const servedRoot = (): string => homePath('episodes');

function checkedDir(dir: string): string {
  const root = resolve(servedRoot());
  const abs = resolve(dir);
  const rel = relative(root, abs);
  if (rel === '' || rel.startsWith('..') || rel.split(sep).includes('..')) {
    throw ApplicationFailure.nonRetryable(`${dir} is not under ${root}: only episode logs folders are served`, 'berth:not_served');
  }
  return abs;
}

/** A served folder's name in BERTH_HOME/exports: its archives out, and the chunks of one coming in. */
const folderKey = (dir: string): string => createHash('sha256').update(dir).digest('hex').slice(0, 32);

/** `<folder key>-<sha256>.tar`: an archive never changes once made, so every chunk of one transfer agrees. */
async function pack(dir: string, key: string, exports: string): Promise<string> {
  await mkdir(exports, { recursive: true });
  const tmp = join(exports, `${key}.${process.pid}.${Date.now()}.tmp`);
  await run('tar', ['-C', dir, '-cf', tmp, '.']);
  const sha = createHash('sha256').update(await readFile(tmp)).digest('hex');
  // Older archives of this folder are no longer asked for.
  for (const old of readdirSync(exports)) if (old.startsWith(`${key}-`) && !old.endsWith(`${sha}.tar`)) await rm(join(exports, old), { force: true });
  await rename(tmp, join(exports, `${key}-${sha}.tar`));
  return sha;
}

export async function hostArchiveChunk(req: HostArchiveRequest): Promise<HostArchiveChunk> {
  const dir = checkedDir(req.dir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    return { data: '', offset: req.offset, total: 0, sha256: '', missing: `${req.dir} is not on this host (removed, or never made)` };
  }
  const exports = homePath('exports');
  const key = folderKey(dir);
  const asked = req.sha256 && /^[0-9a-f]{64}$/.test(req.sha256) && existsSync(join(exports, `${key}-${req.sha256}.tar`)) ? req.sha256 : undefined;
  const sha256 = asked ?? await pack(dir, key, exports);
  const path = join(exports, `${key}-${sha256}.tar`);
  const total = statSync(path).size;
  const length = Math.max(0, Math.min(req.length, HOST_ARCHIVE_CHUNK_MAX, total - req.offset));
  const buf = Buffer.alloc(length);
  const fd = await open(path, 'r');
  try {
    await fd.read(buf, 0, length, req.offset);
  } finally {
    await fd.close();
  }
  return { data: buf.toString('base64'), offset: req.offset, total, sha256 };
}

/** Unpacks a folder's tar archive into `dir` (made when missing): files there already are replaced by the archive's. */
export async function unpackArchive(archive: Buffer, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.berth-incoming.${process.pid}.${Date.now()}.tar`);
  await writeFile(tmp, archive);
  try {
    await run('tar', ['-C', dir, '--exclude', `./${basename(tmp)}`, '-xf', tmp]);
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * One chunk of an episode folder's archive from another worker: written at its offset into a staging file named by
 * the archive's content (a chunk sent twice writes the same bytes), and once all of it is here and intact, unpacked
 * into the folder.
 */
export async function hostFilesPut(req: HostFilesPut): Promise<{ received: number; unpacked: boolean }> {
  const dir = checkedDir(req.dir);
  if (!/^[0-9a-f]{64}$/.test(req.sha256)) throw ApplicationFailure.nonRetryable(`${req.sha256} is no sha256`, 'berth:not_served');
  const incoming = homePath('exports', 'incoming');
  await mkdir(incoming, { recursive: true });
  const staged = join(incoming, `${folderKey(dir)}-${req.sha256}.part`);
  const data = Buffer.from(req.data, 'base64');
  const fd = await open(staged, existsSync(staged) ? 'r+' : 'w');
  try {
    await fd.write(data, 0, data.length, req.offset);
  } finally {
    await fd.close();
  }
  const received = req.offset + data.length;
  if (received < req.total) return { received, unpacked: false };
  const archive = (await readFile(staged)).subarray(0, req.total);
  await rm(staged, { force: true });
  const sha = createHash('sha256').update(archive).digest('hex');
  if (sha !== req.sha256) {
    throw ApplicationFailure.nonRetryable(`the archive of ${req.dir} arrived damaged (sha256 ${sha}, expected ${req.sha256})`, 'berth:files_damaged');
  }
  await unpackArchive(archive, dir);
  return { received, unpacked: true };
}
