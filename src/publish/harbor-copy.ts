// `berth publish DATASET OUT --harbor` (Task Folder Format § Additional features: "`gym dataset publish
// --harbor` writes a copy that Harbor can run"; nemo_gym.data.tasks.harbor.python_verifier, the shim "into each expanded task's tests/").
// Each task loaded (a template's rows rendered) is copied to OUT/<task id>/ with what Harbor needs and lacks:
// - a Python verifier graded by Berth's shim written into tests/ (test.sh, .ng/ runner and helpers, the task's
//   fields; a dataset-level verifier.py as tests/.ng/verifier.py), with no response, which Harbor cannot give;
// - solution/answer.md turned into a solution/solve.sh that writes it;
// - dataset.toml without its [gym] table;
// - a prebuilt image with a workdir and nothing to upload: an environment/Dockerfile `FROM image` + `WORKDIR`,
//   since Harbor 0.25 runs every command in the workdir and, unlike Berth, does not create it.
// The refusals (refusals.ts) are listed; the other tasks are written.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { DATASET_LAYOUT, SOLUTION_FILES, TASK_LAYOUT, TaskRefusal, isJunk, type Task } from '../task/index.ts';
import { shimFiles, shimInputs } from '../verify/index.ts';
import { solveShForAnswer } from './answer.ts';
import { refuseForHarbor, refuseSharedNames } from './refusals.ts';
import { dropKey, dropTables } from './toml-lines.ts';

export interface RefusedTask { task_id: string; reason: string }

export interface PublishInput {
  root: string;
  tasks: readonly Task[];
  /** Tasks the loader already refused. */
  refused: readonly RefusedTask[];
}

export interface Published {
  out: string;
  written: string[];
  refused: RefusedTask[];
  /** What was changed in a task on the way, per task id. */
  notes: Record<string, string[]>;
}


const DATASET_FILES = new Set<string>(Object.values(DATASET_LAYOUT));

/** The folder's files; at a task folder that is also the dataset root, not the hidden entries or the dataset's own files. */
function copyTree(from: string, to: string, datasetRoot: string | null = null): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (isJunk(e.name)) continue;
    if (from === datasetRoot && (e.name.startsWith('.') || DATASET_FILES.has(e.name))) continue;
    const src = join(from, e.name);
    const dst = join(to, e.name);
    if (e.isDirectory()) copyTree(src, dst);
    else if (e.isFile() || e.isSymbolicLink()) copyFileSync(src, dst);
  }
}

function write(path: string, content: Buffer | string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
}

async function writeShim(task: Task, dir: string): Promise<void> {
  const tests = join(dir, TASK_LAYOUT.testsDir);
  for (const f of await shimFiles()) write(join(tests, f.path), f.content, f.mode);
  const taskData = typeof task.task_data === 'object' && task.task_data !== null && !Array.isArray(task.task_data) ? task.task_data as Record<string, unknown> : {};
  const datasetVerifier = task.verifier.python_in_task_tests ? undefined : readFileSync(task.verifier.script!);
  for (const f of shimInputs({ taskData, ...(datasetVerifier ? { datasetVerifier } : {}) })) write(join(tests, f.path), f.content, f.mode);
}

function environmentFiles(dir: string): string[] {
  const env = join(dir, TASK_LAYOUT.environmentDir);
  return existsSync(env) ? readdirSync(env) : [];
}

/** Harbor does not make a prebuilt image's workdir: build it into an image instead (see the header). */
function workdirImage(dir: string, notes: string[]): void {
  const tomlPath = join(dir, TASK_LAYOUT.taskToml);
  const text = readFileSync(tomlPath, 'utf8');
  const env = (parseToml(text) as { environment?: { docker_image?: unknown; workdir?: unknown } }).environment;
  if (typeof env?.docker_image !== 'string' || typeof env.workdir !== 'string') return;
  const files = environmentFiles(dir);
  if (files.includes('Dockerfile')) return;
  if (files.length > 0 && !files.some((f) => f.startsWith('docker-compose.'))) return; // Harbor uploads them into the workdir, making it.
  const without = dropKey(text, 'environment', 'docker_image');
  if (without === null) return;
  writeFileSync(tomlPath, without);
  write(join(dir, TASK_LAYOUT.dockerfile), `# Written by berth publish --harbor: Harbor 0.25 does not create a prebuilt image's workdir.\nFROM ${env.docker_image}\nWORKDIR ${env.workdir}\n`, 0o644);
  notes.push(`[environment].docker_image ${env.docker_image} became environment/Dockerfile (FROM it, WORKDIR ${env.workdir})`);
}

async function publishTask(task: Task, dir: string): Promise<string[]> {
  const notes: string[] = [];
  copyTree(task.path, dir, task.dataset_root);
  if (task.verifier.kind === 'python') {
    await writeShim(task, dir);
    notes.push('Python verifier graded through the shim in tests/');
  }
  if (task.solution.kind === 'answer_md' && task.solution.dir !== null) {
    const rel = task.solution.dir.slice(task.path.length + 1);
    const answer = readFileSync(join(task.solution.dir, SOLUTION_FILES.answerMd));
    write(join(dir, rel, SOLUTION_FILES.solveSh), solveShForAnswer(answer), 0o755);
    rmSync(join(dir, rel, SOLUTION_FILES.answerMd));
    notes.push(`${rel}/answer.md became ${rel}/solve.sh`);
  }
  if (!task.multi_step) workdirImage(dir, notes);
  return notes;
}

export async function publishHarbor(dataset: PublishInput, out: string): Promise<Published> {
  const refused: RefusedTask[] = [...dataset.refused];
  const listed = (r: TaskRefusal): RefusedTask => ({ task_id: r.task_id, reason: r.message });
  const shared = refuseSharedNames(dataset.tasks);
  const sharedIds = new Set(shared.map((r) => r.task_id));
  refused.push(...shared.map(listed));
  const result: Published = { out, written: [], refused, notes: {} };
  mkdirSync(out, { recursive: true });
  for (const task of dataset.tasks) {
    if (sharedIds.has(task.id)) continue;
    const r = refuseForHarbor(task);
    if (r) {
      refused.push(listed(r));
      continue;
    }
    result.notes[task.id] = await publishTask(task, join(out, task.id));
    result.written.push(task.id);
  }
  const datasetToml = join(dataset.root, DATASET_LAYOUT.datasetToml);
  if (existsSync(datasetToml)) writeFileSync(join(out, DATASET_LAYOUT.datasetToml), dropTables(readFileSync(datasetToml, 'utf8'), 'gym'));
  return result;
}
