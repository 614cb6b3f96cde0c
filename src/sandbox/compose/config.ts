// Compose's own reading of a task's file over Berth's `main`: `docker compose config --format json` (interpolation,
// `$$`, merging, relative paths). It reads files only, never the engine, so every driver that runs Compose tasks
// resolves them here (the Docker driver before `up`, the Kubernetes driver before it makes the group's pod).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SeedFailed } from '../errors.ts';
import type { ComposeFileSpec } from '../driver.ts';
import { projectArgs, runCompose, type ComposeCliSettings } from './cli.ts';
import { baseMainFile, type ComposeModel } from './model.ts';

const CONFIG_TIMEOUT_MS = 60_000;
const FAILURE_CHARS = 6000;

export function composeFailure(what: string, run: { stdout: string; stderr: string; timedOut: boolean }, budgetSec: number): string {
  const text = `${run.stderr}\n${run.stdout}`.trim();
  const why = run.timedOut ? `did not finish within ${budgetSec} s` : 'failed';
  return `${what} ${why}: ${text.length > FAILURE_CHARS ? `…${text.slice(-FAILURE_CHARS)}` : text}`;
}

/**
 * Compose's own reading of the task's file over Berth's `main` (as Harbor stacks its template and the
 * task's file): interpolation, `$$`, merging and relative paths, from `config --format json`.
 */
export async function resolveComposeModel(spec: ComposeFileSpec, stateDir: string, compose?: ComposeCliSettings): Promise<ComposeModel> {
  await mkdir(stateDir, { recursive: true });
  const baseFile = join(stateDir, 'main.json');
  await writeFile(baseFile, JSON.stringify(baseMainFile(spec.main.image)));
  const config = await runCompose(
    [...projectArgs(spec.project, [baseFile, spec.composeFile], spec.projectDir), 'config', '--format', 'json'],
    { env: spec.interpolationEnv, timeoutMs: CONFIG_TIMEOUT_MS, settings: compose },
  );
  if (config.code !== 0) {
    throw new SeedFailed('harbor:seed_failed', composeFailure(`docker compose config of ${spec.composeFile}`, config, CONFIG_TIMEOUT_MS / 1000));
  }
  return JSON.parse(config.stdout) as ComposeModel;
}
