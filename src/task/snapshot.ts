// Reads a task folder once: every file the digest covers (hashed) and the texts the loader parses.
// Everything after this is pure and works on the snapshot, so tests can build snapshots in memory.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { join, sep } from 'node:path';
import type { RefusalDetail } from './errors.ts';
import { TASK_LAYOUT as L } from './layout.ts';

export interface SnapshotFile {
  /** Path relative to the task folder, `/`-separated. */
  rel: string;
  /** Hex SHA-256 of the contents. */
  sha256: string;
  size: number;
  /** UTF-8 text, kept only for files the loader parses. */
  text?: string;
}

export interface TaskSnapshot {
  /** Absolute path of the task folder. */
  root: string;
  files: ReadonlyMap<string, SnapshotFile>;
  /** Relative folders that exist (`tests`, `steps/a`, `steps/a/workdir`, ...). */
  dirs: ReadonlySet<string>;
  /** Symbolic links the loader refuses (outside the folder, or to a folder). */
  problems: readonly RefusalDetail[];
  /** Names of the root's other files, which the digest does not cover (never read; e.g. a template's tasks.jsonl). */
  uncovered: ReadonlySet<string>;
}

/** Root files the digest covers (NeMo Gym 0.7 section 7), plus task_data.json. */
export const ROOT_FILES = [L.taskToml, L.instruction, L.readme, L.trajectory, L.taskData] as const;
/** Folders whose whole contents the digest covers. */
export const COVERED_DIRS = [L.environmentDir, L.testsDir, L.solutionDir, L.stepsDir] as const;

export function isJunk(name: string): boolean {
  return (
    name === '__pycache__' ||
    name === '.DS_Store' ||
    name.endsWith('.pyc') ||
    name.endsWith('.swp') ||
    name.endsWith('.swo') ||
    name.endsWith('~')
  );
}

/** Files whose text the loader reads. */
export function wantsText(rel: string): boolean {
  if (rel === L.taskToml || rel === L.instruction || rel === L.taskData) return true;
  if (rel === L.dockerfile || rel === L.testsCompose || rel === L.environmentCompose) return true;
  return /^steps\/[^/]+\/instruction\.md$/.test(rel);
}

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Reads and hashes one file; a file too large for one buffer is hashed in chunks (and never parsed). */
function readEntry(rel: string, abs: string): SnapshotFile {
  let data: Buffer;
  try {
    data = readFileSync(abs);
  } catch (e) {
    if (!(e instanceof RangeError) && (e as NodeJS.ErrnoException).code !== 'ERR_FS_FILE_TOO_LARGE') throw e;
    const h = createHash('sha256');
    const fd = openSync(abs, 'r');
    const chunk = Buffer.allocUnsafe(1 << 20);
    let size = 0;
    try {
      for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) {
        h.update(chunk.subarray(0, n));
        size += n;
      }
    } finally {
      closeSync(fd);
    }
    return { rel, sha256: h.digest('hex'), size };
  }
  return fileEntry(rel, data);
}

export function fileEntry(rel: string, data: Buffer): SnapshotFile {
  const entry: SnapshotFile = { rel, sha256: sha256Hex(data), size: data.length };
  if (wantsText(rel)) entry.text = data.toString('utf8');
  return entry;
}

/** Reads `root` from disk (its entries may be passed in when discovery already read them). Throws only for an unreadable root; problems inside are recorded. */
export function readTaskFolder(root: string, rootEntries?: readonly Dirent[]): TaskSnapshot {
  const files = new Map<string, SnapshotFile>();
  const dirs = new Set<string>();
  const problems: RefusalDetail[] = [];
  const uncovered = new Set<string>();
  let realRoot: string | null = null;

  const resolveLink = (abs: string, rel: string): 'file' | 'dir' | null => {
    realRoot ??= realpathSync(root);
    let target: string;
    try {
      target = realpathSync(abs);
    } catch {
      problems.push({
        code: 'symlink_outside_task',
        file: rel,
        key: '',
        problem: 'the symbolic link is broken',
        fix: 'replace the link with the file it should point to, or remove it',
      });
      return null;
    }
    if (target !== realRoot && !target.startsWith(realRoot + sep)) {
      problems.push({
        code: 'symlink_outside_task',
        file: rel,
        key: '',
        value: target,
        problem: 'the symbolic link resolves outside the task folder',
        fix: 'copy the file into the task folder instead of linking to it',
      });
      return null;
    }
    if (statSync(target).isDirectory()) {
      problems.push({
        code: 'symlink_outside_task',
        file: rel,
        key: '',
        value: target,
        problem: 'a symbolic link to a folder is not read',
        fix: 'replace the folder link with a real folder',
      });
      return null;
    }
    return 'file';
  };

  const walk = (dirAbs: string, dirRel: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dirAbs, { withFileTypes: true });
    } catch {
      return;
    }
    dirs.add(dirRel);
    for (const e of entries) {
      if (isJunk(e.name)) continue;
      const abs = `${dirAbs}${sep}${e.name}`;
      const rel = `${dirRel}/${e.name}`;
      if (e.isDirectory()) walk(abs, rel);
      else if (e.isFile()) files.set(rel, readEntry(rel, abs));
      else if (e.isSymbolicLink() && resolveLink(abs, rel) === 'file') files.set(rel, readEntry(rel, abs));
    }
  };

  const top = rootEntries ?? readdirSync(root, { withFileTypes: true });
  for (const e of top) {
    const abs = join(root, e.name);
    if ((ROOT_FILES as readonly string[]).includes(e.name)) {
      if (e.isFile()) files.set(e.name, readEntry(e.name, abs));
      else if (e.isSymbolicLink() && resolveLink(abs, e.name) === 'file') files.set(e.name, readEntry(e.name, abs));
    } else if ((COVERED_DIRS as readonly string[]).includes(e.name)) {
      if (e.isDirectory()) walk(abs, e.name);
      else if (e.isSymbolicLink()) resolveLink(abs, e.name);
    } else if (e.isFile()) {
      uncovered.add(e.name);
    }
  }
  return { root, files, dirs, problems, uncovered };
}

/** Builds a snapshot from in-memory contents (tests, property tests). Folders are implied by paths. */
export function snapshotFromFiles(root: string, contents: Readonly<Record<string, string | Buffer>>, extraDirs: string[] = []): TaskSnapshot {
  const files = new Map<string, SnapshotFile>();
  const dirs = new Set<string>(extraDirs);
  const uncovered = new Set<string>();
  for (const [rel, content] of Object.entries(contents)) {
    const parts = rel.split('/');
    if (parts.some(isJunk)) continue;
    const top = parts[0]!;
    const covered = parts.length === 1 ? (ROOT_FILES as readonly string[]).includes(top) : (COVERED_DIRS as readonly string[]).includes(top);
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    if (!covered) {
      if (parts.length === 1) uncovered.add(top);
      continue;
    }
    files.set(rel, fileEntry(rel, typeof content === 'string' ? Buffer.from(content) : content));
  }
  return { root, files, dirs, problems: [], uncovered };
}
