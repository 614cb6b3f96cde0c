// The Python verifier shim (nemo_gym.data.tasks.harbor.python_verifier): the files uploaded over /tests for a task graded by a
// `verify` function instead of tests/test.sh, with explicit modes so they are world-readable whatever the
// umask of whoever checked out or uploads them (test.sh runs as the task's [verifier].user, often not root).
//
// The sources live in src/verify/shim/ (real .py files with their own unit tests); this module only maps them
// to their place under /tests and adds the per-episode inputs.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { SANDBOX_LAYOUT } from '../task/index.ts';

export interface ShimFile {
  /** Relative to /tests, POSIX separators, e.g. 'test.sh' or '.ng/run_verifier.py'. */
  path: string;
  mode: number;
  content: Buffer;
}

export const SHIM_SOURCE_DIR = fileURLToPath(new URL('./shim/', import.meta.url));

const FILE_MODE = 0o644;
const EXEC_MODE = 0o755;
const DIR_MODE = 0o755;

/**
 * Where everything goes, relative to `testsDir`. Upload the task's own tests/ first, then these on top.
 *
 * ```
 * /tests/test.sh                            the shim's entry point (0755), run as `bash /tests/test.sh`
 * /tests/verifier.py                        the task's own tests/verifier.py, uploaded with tests/
 * /tests/.ng/run_verifier.py                the runner
 * /tests/.ng/nemo_gym/__init__.py           empty: shadows any nemo_gym in the image
 * /tests/.ng/nemo_gym/verifiers/__init__.py final_text, exact_match, numeric_match
 * /tests/.ng/nemo_gym/verifiers/files.py    read_text, file_exists, text_file_equals
 * /tests/.ng/task_data.json                 the task's fields (shimInputs); missing means {}
 * /tests/.ng/response.json                  the agent's final response (shimInputs), only when there is one
 * /tests/.ng/verifier.py                    the dataset-root verifier.py (shimInputs), only for a task
 *                                           without tests/; when present it is the module that grades
 * ```
 *
 * test.sh runs from the task's working directory (that is the `workspace`) and writes
 * /logs/verifier/reward.txt (a number) or reward.json (a dict); its stdout and stderr belong in
 * /logs/verifier/test-stdout.txt like any test.sh. It reads these variables, all unset in a sandbox and
 * there for running the shim elsewhere: BERTH_TESTS_DIR (/tests), BERTH_SHIM_DIR (/tests/.ng),
 * BERTH_REWARD_DIR (/logs/verifier), BERTH_WORKSPACE (the current directory), BERTH_VERIFIER (the module).
 * A separate verifier sets BERTH_WORKSPACE to the task's working directory (where the artifacts restore it), since
 * its sandbox's own working directory is the verifier environment's.
 */
export const WORKSPACE_VAR = 'BERTH_WORKSPACE';
export const shimLayout = {
  testsDir: SANDBOX_LAYOUT.testsDir,
  shimDir: '.ng',
  rewardDir: SANDBOX_LAYOUT.verifierLogs,
  entryPoint: 'test.sh',
  runner: '.ng/run_verifier.py',
  taskVerifier: 'verifier.py',
  datasetVerifier: '.ng/verifier.py',
  taskData: '.ng/task_data.json',
  response: '.ng/response.json',
  /** Create these (relative to testsDir) with this mode before writing files into them. */
  directories: ['.ng', '.ng/nemo_gym', '.ng/nemo_gym/verifiers'],
  directoryMode: DIR_MODE,
  env: ['BERTH_TESTS_DIR', 'BERTH_SHIM_DIR', 'BERTH_REWARD_DIR', 'BERTH_WORKSPACE', 'BERTH_VERIFIER'],
} as const;

// Source file under src/verify/shim -> place under /tests. Listed, not globbed: the shim's own tests and any
// __pycache__ must never be uploaded.
const SOURCES: ReadonlyArray<readonly [source: string, target: string, mode: number]> = [
  ['test.sh', 'test.sh', EXEC_MODE],
  ['run_verifier.py', '.ng/run_verifier.py', FILE_MODE],
  ['nemo_gym/__init__.py', '.ng/nemo_gym/__init__.py', FILE_MODE],
  ['nemo_gym/verifiers/__init__.py', '.ng/nemo_gym/verifiers/__init__.py', FILE_MODE],
  ['nemo_gym/verifiers/files.py', '.ng/nemo_gym/verifiers/files.py', FILE_MODE],
];

/** The shim's fixed files, read from disk, with the modes they must have in the sandbox. */
export async function shimFiles(): Promise<ShimFile[]> {
  return Promise.all(
    SOURCES.map(async ([source, target, mode]) => ({
      path: target,
      mode,
      content: await readFile(path.join(SHIM_SOURCE_DIR, ...source.split('/'))),
    })),
  );
}

export interface ShimInputs {
  /** The task's fields (task_data.json or a parameterized row). */
  taskData: Record<string, unknown>;
  /** The agent's final Responses-API response; omit when there is none. */
  response?: unknown;
  /** Contents of the dataset-root verifier.py, for a task that has no tests/ folder. */
  datasetVerifier?: Buffer | string;
}

/** The per-episode files that go beside the shim. */
export function shimInputs(inputs: ShimInputs): ShimFile[] {
  const files: ShimFile[] = [
    { path: shimLayout.taskData, mode: FILE_MODE, content: Buffer.from(JSON.stringify(inputs.taskData) + '\n') },
  ];
  if (inputs.response !== undefined) {
    files.push({
      path: shimLayout.response,
      mode: FILE_MODE,
      content: Buffer.from(JSON.stringify(inputs.response) + '\n'),
    });
  }
  if (inputs.datasetVerifier !== undefined) {
    const content = Buffer.isBuffer(inputs.datasetVerifier)
      ? inputs.datasetVerifier
      : Buffer.from(inputs.datasetVerifier);
    files.push({ path: shimLayout.datasetVerifier, mode: FILE_MODE, content });
  }
  return files;
}
