// The sandbox an episode run's seed made, recorded in the run's logs folder on this host (as the last verification
// records its outcome: final-verify.ts). An attempt of seedThenAgentTurn retried after the seed finished (its worker
// died during the agent) reads it and goes straight to the agent, which re-attaches to the process already running:
// no second seed, no pool claim, no task files delivered again over what the agent changed.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxRef } from '../activities/types.ts';

const RECORD = 'seeded-sandbox.json';

/** The sandbox a finished seed of this run recorded in `logsDir`, or undefined (no seed finished here). */
export function recordedSeed(logsDir: string): SandboxRef | undefined {
  const file = join(logsDir, RECORD);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SandboxRef;
  } catch {
    return undefined; // torn by a crash mid-write (the rename makes that unlikely): seed again, which adopts
  }
}

/** Records the seeded sandbox; written whole or not at all. */
export function recordSeed(logsDir: string, sandbox: SandboxRef): void {
  mkdirSync(logsDir, { recursive: true });
  const file = join(logsDir, RECORD);
  writeFileSync(`${file}.tmp`, JSON.stringify(sandbox));
  renameSync(`${file}.tmp`, file);
}
