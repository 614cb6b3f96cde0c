// The minimal task reading the first slice needs; src/task's loader supersedes it.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'smol-toml';

export interface LiteTask {
  image: string;
  workdir: string;
  agentTimeoutSec: number;
  verifierTimeoutSec: number;
}

export function readLiteTask(taskPath: string): LiteTask {
  const toml = parse(readFileSync(join(taskPath, 'task.toml'), 'utf8')) as any;
  return {
    image: toml.environment?.docker_image ?? 'berth-base:bookworm',
    workdir: toml.environment?.workdir ?? '/app',
    agentTimeoutSec: Number(toml.agent?.timeout_sec ?? 28800),
    verifierTimeoutSec: Number(toml.verifier?.timeout_sec ?? 600),
  };
}

function files(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((e) => {
    const full = join(dir, e);
    return statSync(full).isDirectory() ? files(full) : [full];
  });
}

export function liteDigest(taskPath: string): string {
  const h = createHash('sha256');
  for (const f of files(taskPath)) h.update(relative(taskPath, f)).update('\0').update(readFileSync(f)).update('\0');
  return `sha256:${h.digest('hex')}`;
}

export function isTaskFolder(path: string): boolean {
  return existsSync(join(path, 'task.toml'));
}
