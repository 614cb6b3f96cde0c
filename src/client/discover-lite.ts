// Minimal discovery for the first slice; src/task's loadDataset supersedes it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { liteDigest } from '../activities/task-lite.ts';

export interface DiscoveredTask { taskId: string; taskPath: string; digest: string }

export function discoverLite(root: string): DiscoveredTask[] {
  const abs = resolve(root);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) {
    throw new Error(`Dataset ${root} does not exist or is not a folder. Pass a folder of task folders (each with task.toml), e.g. examples/hello.`);
  }
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (existsSync(join(dir, 'task.toml'))) return void found.push(dir);
    if (depth >= 6) return;
    for (const e of readdirSync(dir).sort()) {
      if (e.startsWith('.')) continue;
      const full = join(dir, e);
      if (statSync(full).isDirectory()) walk(full, depth + 1);
    }
  };
  walk(abs, 0);
  return found.map((p) => ({ taskId: basename(p), taskPath: p, digest: liteDigest(p) }));
}
