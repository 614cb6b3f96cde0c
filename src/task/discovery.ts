// Finding task folders (Task Folder Format § Task folder layout): a folder with task.toml
// is a task; otherwise its subfolders are searched, up to six levels down. Hidden folders are
// skipped and a task folder that is a symbolic link is refused.
import { readdirSync, statSync, existsSync, type Dirent } from 'node:fs';
import { basename, join } from 'node:path';
import { TASK_LAYOUT } from './layout.ts';

export const MAX_DEPTH = 6;

export interface FoundTask {
  id: string;
  path: string;
  /** The folder is a symbolic link (refused by the loader). */
  symlink: boolean;
  /** The folder's entries, already read while searching (saves reading them again). */
  entries?: Dirent[];
}

function hasTaskToml(entries: Dirent[]): boolean {
  return entries.some((e) => e.name === TASK_LAYOUT.taskToml && (e.isFile() || e.isSymbolicLink()));
}

export function discoverTaskFolders(root: string): FoundTask[] {
  const found: FoundTask[] = [];
  const rootEntries = readdirSync(root, { withFileTypes: true });
  if (hasTaskToml(rootEntries)) return [{ id: basename(root), path: root, symlink: false, entries: rootEntries }];
  const walk = (dir: string, entries: Dirent[], depth: number): void => {
    const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of sorted) {
      if (e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      if (e.isSymbolicLink()) {
        // Links are never followed while searching; one that is a task folder is refused.
        try {
          if (statSync(path).isDirectory() && existsSync(join(path, TASK_LAYOUT.taskToml))) found.push({ id: e.name, path, symlink: true });
        } catch {
          // A broken link is not a task folder.
        }
        continue;
      }
      if (!e.isDirectory()) continue;
      let children: Dirent[];
      try {
        children = readdirSync(path, { withFileTypes: true });
      } catch {
        continue;
      }
      if (hasTaskToml(children)) found.push({ id: e.name, path, symlink: false, entries: children });
      else if (depth < MAX_DEPTH) walk(path, children, depth + 1);
    }
  };
  walk(root, rootEntries, 1);
  return found;
}
