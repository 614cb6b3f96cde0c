// The dataset's task_data.py validates every task's fields before anything runs (NeMo Gym 0.7
// § 7, Typed fields; docs/parameterized-and-publish.md). The model is the dataset's code, so it runs in a
// container (no network, read-only, unprivileged user), never on the host. NeMo Gym's models are Pydantic models:
// the image must have pydantic 2 (BERTH_TASK_DATA_IMAGE; default berth-base:bookworm, which does not), and
// without it the dataset is refused with that fix rather than run unvalidated.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DATASET_LAYOUT, DatasetRefusal, TaskRefusal, TASK_LAYOUT, type Task } from '../task/index.ts';

export const DEFAULT_TASK_DATA_IMAGE = 'berth-base:bookworm';
const VALIDATOR = fileURLToPath(new URL('./task-data/validate_rows.py', import.meta.url));
const DOCS = 'docs/parameterized-and-publish.md';
const TIMEOUT_MS = 120_000;

export interface FieldError { loc: string; msg: string; type: string }
type ValidatorOutput = { invalid: Array<{ task_id: string; errors: FieldError[] }> } | { error: string; message: string };

export function taskDataImage(explicit?: string): string {
  return explicit ?? process.env.BERTH_TASK_DATA_IMAGE ?? DEFAULT_TASK_DATA_IMAGE;
}

/** The refusal of one task whose fields the model rejects: its id, each field and what is wrong with it. */
export function invalidFieldsRefusal(task: Pick<Task, 'id' | 'path'>, errors: readonly FieldError[]): TaskRefusal {
  const fields = errors.map((e) => `${e.loc || '(the row)'}: ${e.msg}`).join('; ');
  return new TaskRefusal(task.id, task.path, {
    code: 'invalid_task_data',
    file: join(task.path, TASK_LAYOUT.taskData),
    key: errors[0]?.loc ?? '',
    problem: `the dataset's ${DATASET_LAYOUT.taskDataPy} rejects task "${task.id}" (${fields})`,
    fix: `correct the row's fields (tasks.jsonl of a template, else task_data.json) so that TaskData accepts them (see ${DOCS})`,
  });
}

function runValidator(image: string, dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = ['run', '--rm', '--network', 'none', '--read-only', '--user', '65534:65534', '--memory', '512m',
    '--tmpfs', '/tmp', '-v', `${dir}:/in:ro`, '--entrypoint', 'python3', image, '-B', '/in/validate_rows.py'];
  return new Promise((resolve) => {
    execFile('docker', args, { timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function parseOutput(stdout: string): ValidatorOutput | null {
  try {
    return JSON.parse(stdout.trim().split('\n').pop() ?? '') as ValidatorOutput;
  } catch {
    return null;
  }
}

/**
 * Validates each task's fields (task_data.json, or a rendered row's; none means {}) with the dataset's
 * task_data.py. Tasks it rejects move to `refused`, each by id and field; a model that cannot run at all (no
 * pydantic in the image, an import error, no TaskData) throws a DatasetRefusal. Without task_data.py, nothing runs.
 */
export async function checkTaskData(root: string, tasks: readonly Task[], opts: { image?: string } = {}): Promise<{ tasks: Task[]; refused: TaskRefusal[] }> {
  const model = join(root, DATASET_LAYOUT.taskDataPy);
  if (!existsSync(model) || tasks.length === 0) return { tasks: [...tasks], refused: [] };
  const image = taskDataImage(opts.image);
  const dir = mkdtempSync(join(tmpdir(), 'berth-task-data-'));
  try {
    chmodSync(dir, 0o755);
    copyFileSync(model, join(dir, 'task_data.py'));
    copyFileSync(VALIDATOR, join(dir, 'validate_rows.py'));
    writeFileSync(join(dir, 'rows.json'), JSON.stringify(tasks.map((t) => ({ task_id: t.id, task_data: t.task_data ?? {} }))));
    for (const f of ['task_data.py', 'validate_rows.py', 'rows.json']) chmodSync(join(dir, f), 0o644);
    const run = await runValidator(image, dir);
    const out = parseOutput(run.stdout);
    if (out === null || 'error' in out) {
      const noPydantic = out !== null && out.error === 'no_pydantic';
      throw new DatasetRefusal('task_data_model', {
        file: model, key: '', value: image,
        problem: out === null
          ? `the model could not be run in ${image} (exit ${run.code}): ${run.stderr.trim().split('\n').slice(-3).join(' ')}`
          : `${out.message} (in ${image})`,
        fix: noPydantic
          ? `set BERTH_TASK_DATA_IMAGE to an image with python3 and pydantic 2 (see ${DOCS})`
          : `make task_data.py importable with the standard library and pydantic, exporting TaskData (see ${DOCS})`,
      });
    }
    const bad = new Map(out.invalid.map((r) => [r.task_id, r.errors]));
    return {
      tasks: tasks.filter((t) => !bad.has(t.id)),
      refused: tasks.filter((t) => bad.has(t.id)).map((t) => invalidFieldsRefusal(t, bad.get(t.id)!)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The loaded dataset with the tasks task_data.py rejects moved to its refusals. */
export async function withValidFields<D extends { root: string; tasks: Task[]; refused: TaskRefusal[] }>(d: D, opts: { image?: string } = {}): Promise<D> {
  const checked = await checkTaskData(d.root, d.tasks, opts);
  return { ...d, tasks: checked.tasks, refused: [...d.refused, ...checked.refused] };
}
