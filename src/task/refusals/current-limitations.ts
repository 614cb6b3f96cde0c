// What Berth does not run yet (Task Folder Format § Current limitations). Each is refused with the
// reason, never run half-way.
import type { BuildContext } from '../build-context.ts';
import { refuse } from '../errors.ts';
import { DATASET_LAYOUT, TASK_LAYOUT, TEMPLATE_ROWS } from '../layout.ts';
import type { TaskSnapshot } from '../snapshot.ts';

const INSTRUCTION_TEMPLATE = 'instruction.template.md';

/**
 * A parameterized template folder (Task Folder Format § Additional features, typed task fields and
 * parameterized tasks): a task folder with `tasks.jsonl` beside its task.toml, or an `instruction.template.md` in
 * place of instruction.md. Loading a dataset renders a template's rows into tasks (src/task/parameterized/); a
 * template folder loaded as one task, or an instruction.template.md without rows, is refused as what it is, not
 * as a task missing its instruction.
 */
export function refuseParameterized(snap: TaskSnapshot, ctx: BuildContext): void {
  const rows = snap.uncovered.has(TEMPLATE_ROWS);
  const template = snap.uncovered.has(INSTRUCTION_TEMPLATE) && !snap.files.has(TASK_LAYOUT.instruction);
  if (!rows && !template) return;
  const found = [rows ? TEMPLATE_ROWS : null, snap.uncovered.has(INSTRUCTION_TEMPLATE) ? INSTRUCTION_TEMPLATE : null].filter((x) => x !== null);
  const typed = ctx.datasetTaskDataPy ? `, typed by the dataset's ${DATASET_LAYOUT.taskDataPy}` : '';
  refuse({
    code: 'parameterized_task',
    file: rows ? TEMPLATE_ROWS : INSTRUCTION_TEMPLATE,
    key: '',
    problem: rows
      ? `the folder is a parameterized task template (${found.join(' and ')}${typed}), not a task: its rows are the tasks`
      : `${INSTRUCTION_TEMPLATE} is rendered only in a template folder, which has ${TEMPLATE_ROWS} beside its task.toml`,
    fix: rows
      ? 'load the dataset that holds the template (berth run/tasks/publish DATASET), which renders one task per row (see docs/parameterized-and-publish.md)'
      : `add ${TEMPLATE_ROWS} (one {"task_id": ..., "task_data": {...}} per line) beside task.toml, or write instruction.md (see docs/parameterized-and-publish.md)`,
  });
}

/** A task that seeds the agent with a transcript runs only with the oracle. */
export function refuseTranscriptPairing(seedTrajectory: string | null, root: string, ctx: BuildContext): void {
  if (seedTrajectory === null || ctx.agent === undefined || ctx.agent === 'oracle' || ctx.allowUnsupportedPairing) return;
  refuse({
    code: 'unsupported_transcript',
    file: seedTrajectory.slice(root.length + 1),
    key: '',
    value: ctx.agent,
    problem: `the task seeds the agent with a transcript, which only the oracle runs (agent "${ctx.agent}")`,
    fix: 'run the task with --agent oracle, or remove the trajectory.json',
  });
}
