import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface ContextFile {
  /** Relative, '/'-separated. */
  path: string;
  /** Permission bits (e.g. 0o755). */
  mode: number;
  type: 'file' | 'directory' | 'symlink';
  /** File bytes, or the link target for a symlink; empty for a directory. */
  content: Buffer;
}

export interface ImageHashInput {
  files: ContextFile[];
  aliases: Record<string, string>;
  buildSettings: Record<string, unknown>;
}

const HASH_PREFIX_LEN = 20;

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Berth's own content hash of a build context: SHA-256 over every path, type, mode and content,
 * plus the image alias map and the build settings, so an alias change or a setting change rebuilds.
 * Pure: the same input always gives the same hex digest, whatever the order of `files`.
 */
export function imageContentHash(input: ImageHashInput): string {
  const h = createHash('sha256');
  const files = [...input.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of files) {
    h.update(`${f.type}\0${f.path}\0${(f.mode & 0o7777).toString(8)}\0${f.content.length}\0`);
    h.update(f.content);
  }
  h.update(`aliases\0${canonicalJson(input.aliases)}\0settings\0${canonicalJson(input.buildSettings)}`);
  return h.digest('hex');
}

/** `hb__<hash prefix>`, plus `-verifier` for a separate verifier's image. */
export function imageTagForHash(hash: string, suffix = ''): string {
  return `hb__${hash.slice(0, HASH_PREFIX_LEN).toLowerCase()}${suffix}`;
}

/** Reads a build context folder into the hash's input form (walks everything, sorted). */
export async function readContextFiles(contextDir: string): Promise<ContextFile[]> {
  const out: ContextFile[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      const path = rel ? `${rel}/${e.name}` : e.name;
      const st = await lstat(abs);
      if (st.isDirectory()) {
        out.push({ path, mode: st.mode & 0o7777, type: 'directory', content: Buffer.alloc(0) });
        await walk(abs, path);
      } else if (st.isSymbolicLink()) {
        out.push({ path, mode: st.mode & 0o7777, type: 'symlink', content: Buffer.from(await readlink(abs)) });
      } else if (st.isFile()) {
        out.push({ path, mode: st.mode & 0o7777, type: 'file', content: await readFile(abs) });
      }
    }
  };
  await walk(contextDir, '');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
