import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, readdir, readFile, readlink, chmod, symlink, unlink, utimes } from 'node:fs/promises';
import path from 'node:path/posix';
import { join as hostJoin, resolve as hostResolve, sep as hostSep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar-stream';
import type { FilesPort } from './driver.ts';
import { shellQuote } from './names.ts';
import { mkdirUnlessThere } from './shell-lines.ts';
import type { SandboxHandle, UploadEntry, UploadOptions } from './types.ts';

interface HostItem {
  rel: string;
  abs: string;
}

/** A folder's contents (not the folder itself), or a single file, as relative paths. */
async function listHost(source: string): Promise<HostItem[]> {
  const st = await lstat(source);
  if (!st.isDirectory()) return [{ rel: path.basename(source), abs: source }];
  const out: HostItem[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const e of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const item = { rel: rel ? `${rel}/${e.name}` : e.name, abs: hostJoin(dir, e.name) };
      out.push(item);
      if (e.isDirectory()) await walk(item.abs, item.rel);
    }
  };
  await walk(source, '');
  return out;
}

async function packHost(pack: tar.Pack, prefix: string, items: HostItem[]): Promise<void> {
  for (const item of items) {
    const st = await lstat(item.abs);
    const header = { name: `${prefix}${item.rel}`, mode: st.mode & 0o7777, mtime: st.mtime, uid: 0, gid: 0 };
    if (st.isDirectory()) {
      pack.entry({ ...header, type: 'directory' });
    } else if (st.isSymbolicLink()) {
      pack.entry({ ...header, type: 'symlink', linkname: await readlink(item.abs) });
    } else if (st.isFile()) {
      const entry = pack.entry({ ...header, size: st.size });
      await pipeline(createReadStream(item.abs), entry);
    }
  }
}

/** Entries are written relative to "/" with the target folder as prefix, so missing parents are created by the engine. */
function tarPrefix(containerDir: string): string {
  const norm = path.normalize(containerDir);
  if (!norm.startsWith('/')) throw new Error(`container folder "${containerDir}" must be an absolute path`);
  const stripped = norm.replace(/^\/+/, '').replace(/\/+$/, '');
  return stripped ? `${stripped}/` : '';
}

export async function uploadPath(
  driver: FilesPort,
  handle: SandboxHandle,
  source: string | UploadEntry[],
  containerDir: string,
  options: UploadOptions = {},
): Promise<void> {
  const prefix = tarPrefix(containerDir);
  const pack = tar.pack();
  let topNames: string[];
  const filling = (async () => {
    if (typeof source === 'string') {
      const items = await listHost(source);
      topNames = [...new Set(items.map((i) => i.rel.split('/')[0]!))];
      await packHost(pack, prefix, items);
    } else {
      topNames = [...new Set(source.map((e) => e.name.split('/')[0]!))];
      for (const e of source) {
        if (e.name.split('/').includes('..') || e.name.startsWith('/')) throw new Error(`bad upload entry name ${e.name}`);
        pack.entry({ name: `${prefix}${e.name}`, mode: e.mode ?? 0o644, uid: 0, gid: 0 }, Buffer.from(e.content));
      }
    }
    pack.finalize();
  })();
  filling.catch((err: unknown) => pack.destroy(err as Error));
  await Promise.all([driver.putArchive(handle, '/', pack as unknown as NodeJS.ReadableStream), filling]);
  if (options.owner && topNames!.length > 0) {
    const targets = topNames!.map((n) => shellQuote(`/${prefix}${n}`)).join(' ');
    const res = await driver.exec(handle, {
      argv: ['/bin/sh', '-c', `chown -R ${shellQuote(options.owner)} -- ${targets}`],
      user: 'root',
      workdir: '/',
    });
    if (res.exitCode !== 0) throw new Error(`uploaded to ${containerDir} but chown to ${options.owner} failed: ${res.stderr}`);
  }
}

/**
 * A folder's contents land in hostDir; a single file lands as hostDir/<basename>.
 * Modes are kept; entries escaping hostDir are refused.
 */
export async function downloadPath(
  driver: FilesPort,
  handle: SandboxHandle,
  containerPath: string,
  hostDir: string,
  options: DownloadOptions = {},
): Promise<void> {
  const exclude = options.exclude ?? [];
  const keep = exclude.length > 0 ? (name: string) => !isExcluded(name, exclude) : undefined;
  await extractTar(await driver.getArchive(handle, containerPath), hostDir, keep);
}

export interface DownloadOptions {
  /**
   * `tar --exclude` patterns, applied on the host to the archive's member names (the path's basename first), as GNU tar
   * applies them: unanchored (any run of whole components), `*` and `?` matching `/` too; an excluded folder's contents go with it.
   */
  exclude?: readonly string[];
}

function globRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        const body = pattern.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else if (c === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 's');
}

/** Whether some run of the name's whole components matches one of the patterns. */
export function isExcluded(name: string, patterns: readonly string[]): boolean {
  const parts = name.replace(/\/+$/, '').split('/').filter(Boolean);
  const res = patterns.map(globRegExp);
  for (let from = 0; from < parts.length; from++) {
    for (let to = from + 1; to <= parts.length; to++) {
      const run = parts.slice(from, to).join('/');
      if (res.some((r) => r.test(run))) return true;
    }
  }
  return false;
}

/**
 * Unpacks a tar as the engine's archive endpoint makes it (a folder as its first entry, then its contents) into
 * hostDir: the folder's contents land there, a single file lands as hostDir/<basename>. Modes are kept; entries
 * escaping hostDir are refused; links are made, never followed.
 */
export async function extractTar(stream: NodeJS.ReadableStream, hostDir: string, keep?: (memberName: string) => boolean): Promise<void> {
  const root = hostResolve(hostDir);
  await mkdir(root, { recursive: true });
  const extract = tar.extract();
  const dirModes: [string, number, Date | undefined][] = [];
  // A folder comes back as a tar whose first entry is the folder itself; its contents are what we keep.
  let isDir: boolean | undefined;
  const consuming = (async () => {
    for await (const entry of extract) {
      const h = entry.header;
      isDir ??= h.type === 'directory';
      let rel = h.name.replace(/\/+$/, '');
      if (isDir) rel = rel.split('/').slice(1).join('/');
      if (rel === '' || (keep && !keep(h.name))) {
        entry.resume();
        continue;
      }
      const target = hostResolve(root, rel);
      if (!target.startsWith(root + hostSep)) throw new Error(`refusing tar entry outside ${hostDir}: ${h.name}`);
      await refuseLinkedParents(root, target, h.name);
      await mkdir(hostResolve(target, '..'), { recursive: true });
      // A link the archive made earlier at this very path is replaced, never written through.
      const there = await lstat(target).catch(() => undefined);
      if (there && !there.isDirectory()) await unlink(target);
      if (h.type === 'directory') {
        await mkdir(target, { recursive: true });
        dirModes.push([target, h.mode ?? 0o755, h.mtime]);
        entry.resume();
      } else if (h.type === 'symlink') {
        await symlink(h.linkname ?? '', target).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
        });
        entry.resume();
      } else if (h.type === 'file' || h.type === 'contiguous-file') {
        const out = createWriteStream(target, { mode: h.mode ?? 0o644 });
        await pipeline(entry, out);
        await chmod(target, h.mode ?? 0o644);
        if (h.mtime) await utimes(target, h.mtime, h.mtime);
      } else {
        entry.resume();
      }
    }
  })();
  await Promise.all([pipeline(stream, extract), consuming]);
  // Directory modes last, so a read-only folder does not block writing its contents.
  for (const [dir, mode] of dirModes.reverse()) await chmod(dir, mode);
}

/** A link an archive made earlier could point anywhere on the host: nothing is written beneath one. */
async function refuseLinkedParents(root: string, target: string, name: string): Promise<void> {
  for (let dir = hostResolve(target, '..'); dir.startsWith(root + hostSep); dir = hostResolve(dir, '..')) {
    const st = await lstat(dir).catch(() => undefined);
    if (st?.isSymbolicLink()) throw new Error(`refusing tar entry ${name}: it lies beneath a link`);
  }
}

/** Larger stages go by upload: the script travels in an environment variable (each is capped at 128 KiB). */
const INLINE_MAX_SCRIPT = 64 * 1024;

/** A byte string as a single-quoted `printf %b` argument: printable ASCII as is, anything else as \0ooo. */
function printfArgument(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    if (b === 0x5c) out += '\\\\';
    else if (b === 0x27) out += "'\\''";
    else if ((b >= 0x20 && b < 0x7f) || b === 0x0a) out += String.fromCharCode(b);
    else out += `\\0${b.toString(8).padStart(3, '0')}`;
  }
  return `'${out}'`;
}

/**
 * A shell script that writes these files (a host folder's contents, or entries) into `containerDir` with their
 * modes, so a small upload rides along in an exec instead of costing its own archive request; null when the
 * source is too large or holds anything but regular files and folders (upload it then).
 */
export async function inlineWriteScript(
  source: string | UploadEntry[], containerDir: string,
  /** Files of a host folder (relative paths) that a later script writes over: not written here. */
  writtenLater: ReadonlySet<string> = new Set(),
): Promise<string | null> {
  const files: { rel: string; mode: number; content: Buffer }[] = [];
  const dirs: string[] = [];
  if (typeof source === 'string') {
    for (const item of await listHost(source)) {
      const st = await lstat(item.abs);
      if (st.isDirectory()) dirs.push(item.rel);
      else if (st.isFile() && writtenLater.has(item.rel)) continue;
      else if (st.isFile() && st.size <= INLINE_MAX_SCRIPT) files.push({ rel: item.rel, mode: st.mode & 0o7777, content: await readFile(item.abs) });
      else return null;
    }
  } else {
    for (const e of source) {
      if (e.name.split('/').includes('..') || e.name.startsWith('/')) throw new Error(`bad upload entry name ${e.name}`);
      files.push({ rel: e.name, mode: e.mode ?? 0o644, content: Buffer.from(e.content) });
    }
  }
  const at = (rel: string) => (rel === '' ? containerDir : `${containerDir.replace(/\/+$/, '')}/${rel}`);
  const q = (rel: string) => shellQuote(at(rel));
  const made = (rel: string) => mkdirUnlessThere(at(rel));
  const lines = [made('')];
  for (const d of dirs) lines.push(made(d));
  let size = 0;
  // One chmod per mode, after the writes: each chmod is a process in the sandbox.
  const byMode = new Map<number, string[]>();
  for (const f of files) {
    const parent = path.dirname(f.rel);
    if (parent !== '.') lines.push(made(parent));
    const arg = printfArgument(f.content);
    size += arg.length;
    if (size > INLINE_MAX_SCRIPT) return null;
    lines.push(`printf '%b' ${arg} > ${q(f.rel)}`);
    byMode.set(f.mode, [...(byMode.get(f.mode) ?? []), q(f.rel)]);
  }
  for (const [mode, paths] of byMode) lines.push(`chmod ${mode.toString(8)} ${paths.join(' ')}`);
  return lines.join('\n');
}
