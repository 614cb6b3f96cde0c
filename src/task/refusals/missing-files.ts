// Task Folder Format § What the loader refuses, Missing files: no task.toml, no instruction.md or tests/
// (single-step, without a dataset verifier.py), or a step without its folder, its instruction.md, or a test.sh in
// its own or the task's tests/.
import type { BuildContext } from '../build-context.ts';
import { refuse } from '../errors.ts';
import { stepLayout, TASK_LAYOUT } from '../layout.ts';
import type { SnapshotFile, TaskSnapshot } from '../snapshot.ts';

export function requireTaskToml(snap: TaskSnapshot): SnapshotFile {
  const file = snap.files.get(TASK_LAYOUT.taskToml);
  if (file === undefined) {
    refuse({ code: 'unreadable', file: TASK_LAYOUT.taskToml, key: '', problem: 'the task folder has no task.toml', fix: 'add task.toml' });
  }
  return file;
}

export function requireInstruction(snap: TaskSnapshot): SnapshotFile {
  const file = snap.files.get(TASK_LAYOUT.instruction);
  if (file === undefined) {
    refuse({ code: 'missing_instruction', file: TASK_LAYOUT.instruction, key: '', problem: 'a single-step task needs instruction.md (the agent\'s prompt)', fix: 'add instruction.md to the task folder' });
  }
  return file;
}

/** What grades a single-step task: tests/test.sh, tests/verifier.py, an empty tests/, or the dataset's verifier.py. */
export type SingleStepGrading =
  | { readonly kind: 'test_sh' | 'python' | 'none'; readonly rel: string | null; readonly datasetVerifier: false }
  | { readonly kind: 'python'; readonly path: string; readonly datasetVerifier: true };

export function singleStepGrading(snap: TaskSnapshot, ctx: BuildContext): SingleStepGrading {
  if (snap.files.has(TASK_LAYOUT.testSh)) return { kind: 'test_sh', rel: TASK_LAYOUT.testSh, datasetVerifier: false };
  if (snap.files.has(TASK_LAYOUT.verifierPy)) return { kind: 'python', rel: TASK_LAYOUT.verifierPy, datasetVerifier: false };
  if (snap.dirs.has(TASK_LAYOUT.testsDir)) return { kind: 'none', rel: null, datasetVerifier: false };
  if (ctx.datasetVerifier === null) {
    refuse({ code: 'missing_tests', file: `${TASK_LAYOUT.testsDir}/`, key: '', problem: 'a single-step task needs a tests/ folder (test.sh or verifier.py), unless the dataset has verifier.py', fix: 'add tests/test.sh, or a verifier.py at the dataset root' });
  }
  return { kind: 'python', path: ctx.datasetVerifier.path, datasetVerifier: true };
}

/**
 * A step's folder and instruction.md, and a test.sh for it unless it verifies separately (its image may ship
 * /tests/test.sh: Harbor never uploads one to a separate verifier); returns the instruction file.
 */
export function requireStepFiles(snap: TaskSnapshot, name: string, separate = false): SnapshotFile {
  const paths = stepLayout(name);
  if (!snap.dirs.has(paths.dir)) {
    refuse({ code: 'missing_step_folder', file: `${paths.dir}/`, key: '', problem: `step "${name}" has no folder`, fix: `add ${paths.dir}/ with instruction.md (and tests/test.sh unless the task's tests/ has one)` });
  }
  const instruction = snap.files.get(paths.instruction);
  if (instruction === undefined) {
    refuse({ code: 'missing_step_instruction', file: paths.instruction, key: '', problem: `step "${name}" has no instruction.md`, fix: `add ${paths.instruction} with the turn's prompt` });
  }
  if (!separate && !snap.files.has(paths.testSh) && !snap.files.has(TASK_LAYOUT.testSh)) {
    refuse({ code: 'missing_step_test', file: paths.testSh, key: '', problem: `step "${name}" has no test.sh in ${paths.testsDir}/ or the task's tests/`, fix: `add ${paths.testSh}, or tests/test.sh for every step` });
  }
  return instruction;
}
