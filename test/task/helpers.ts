// Shared fixtures: in-memory task folders for the pure builder, temp-dir datasets for the disk loader.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { buildTaskOrRefusal, loadDataset, snapshotFromFiles, type BuildContext, type LoadedDataset, type Task, type TaskRefusal } from '../../src/task/index.ts';

export { CORPUS } from '../helpers/corpus.ts';

export const SIMPLE_TOML = '[agent]\ntimeout_sec = 60\n';
export const SIMPLE_FILES: Record<string, string> = {
  'task.toml': SIMPLE_TOML,
  'instruction.md': 'Do the thing.\n',
  'environment/Dockerfile': 'FROM ubuntu:24.04\nWORKDIR /app\n',
  'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
  'solution/solve.sh': 'true\n',
};

export function ctx(overrides: Partial<BuildContext> = {}): BuildContext {
  return {
    id: 'demo',
    datasetRoot: '/data',
    defaults: { num_repeats: 1, timeout_multiplier: 1, resource_multiplier: 1 },
    digestSettings: null,
    datasetVerifier: null,
    datasetFile: '/data/dataset.toml',
    warn: () => {},
    unknownKey: () => {},
    ...overrides,
  };
}

/** Builds a task from in-memory files: SIMPLE_FILES with `files` over them (undefined removes one). */
export function build(files: Record<string, string | undefined>, c: Partial<BuildContext> = {}, extraDirs: string[] = []): Task | TaskRefusal {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...SIMPLE_FILES, ...files })) if (v !== undefined) merged[k] = v;
  return buildTaskOrRefusal(snapshotFromFiles('/data/demo', merged, extraDirs), ctx(c));
}

export function toml(text: string, c: Partial<BuildContext> = {}): Task | TaskRefusal {
  return build({ 'task.toml': text }, c);
}

export function isTask(x: Task | TaskRefusal): x is Task {
  return !(x instanceof Error);
}

export function expectTask(x: Task | TaskRefusal): Task {
  if (!isTask(x)) throw new Error(`expected a task, got refusal: ${x.message}`);
  return x;
}

export function expectRefusal(x: Task | TaskRefusal): TaskRefusal {
  if (isTask(x)) throw new Error(`expected a refusal, got task ${x.id}`);
  return x;
}

/** Writes `files` (relative path → content) under a new temp folder; returns it and a cleanup. */
export function tempTree(files: Record<string, string>): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), 'berth-task-'));
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(root, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** SIMPLE_FILES placed under `prefix/`. */
export function taskFiles(prefix: string, files: Record<string, string | undefined> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...SIMPLE_FILES, ...files })) if (v !== undefined) out[`${prefix}/${k}`] = v;
  return out;
}

export const silent = { warn: () => {} };

/** Loads `files` as a dataset in a temp folder, removed when the test finishes. */
export async function loadTempDataset(files: Record<string, string>, opts: Parameters<typeof loadDataset>[1] = {}): Promise<LoadedDataset> {
  const t = tempTree(files);
  onTestFinished(t.cleanup);
  return loadDataset(t.root, { logger: silent, ...opts });
}
