// What `berth publish --harbor` refuses (Task Folder Format § Additional features: "publishing refuses Python
// verifiers that read `response` or grade in separate mode, and tasks that share a `[task].name`";
// Task Folder Verifiers § Python verifiers: "refuses a Python verifier that task.toml puts in separate mode, or
// that declares `response`, even with a default"). Each refusal names the task, the file and the fix.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TASK_LAYOUT, TaskRefusal, type Task } from '../task/index.ts';
import { declaredArguments } from './verify-arguments.ts';

const DOCS = 'see docs/parameterized-and-publish.md';

export function refuseForHarbor(task: Task): TaskRefusal | null {
  if (task.verifier.kind !== 'python' || task.verifier.script === null) return null;
  if (task.verifier.mode === 'separate') {
    return new TaskRefusal(task.id, task.path, {
      code: 'publish_separate_python', file: join(task.path, TASK_LAYOUT.taskToml), key: 'verifier.environment_mode', value: 'separate',
      problem: 'a Python verifier in separate mode cannot be published: Harbor uploads nothing into a separate verifier\'s container, so the shim would not reach it',
      fix: `grade in shared mode, or with a tests/test.sh (${DOCS})`,
    });
  }
  const args = declaredArguments(readFileSync(task.verifier.script, 'utf8'));
  if (args?.includes('response')) {
    return new TaskRefusal(task.id, task.path, {
      code: 'publish_reads_response', file: task.verifier.script, key: 'verify(response)',
      problem: '`verify` declares `response` (even with a default, it grades differently without one), and Harbor has no response to give it',
      fix: `grade from the workspace instead, e.g. the answer the agent writes to answer.md (${DOCS})`,
    });
  }
  return null;
}

/** Every task whose `[task].name` another task also has, each refused naming the others. */
export function refuseSharedNames(tasks: readonly Task[]): TaskRefusal[] {
  const byName = new Map<string, Task[]>();
  for (const t of tasks) if (t.name !== null) byName.set(t.name, [...(byName.get(t.name) ?? []), t]);
  return [...byName.values()].filter((same) => same.length > 1).flatMap((same) => same.map((t) => new TaskRefusal(t.id, t.path, {
    code: 'publish_duplicate_name', file: join(t.path, TASK_LAYOUT.taskToml), key: 'task.name', value: t.name,
    problem: `tasks ${same.filter((o) => o !== t).map((o) => `"${o.id}"`).join(', ')} have the same [task].name, and Harbor keys a task on its name`,
    fix: `give each task its own [task].name (${DOCS})`,
  })));
}
