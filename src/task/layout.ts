// The one home of a task folder's paths (Task Folder Format § Task folder layout, Harbor's `TaskPaths`)
// and of the dataset root's files. Paths are relative to the task folder, `/`-separated, as snapshots key them;
// `inTask` makes one absolute.

/** Files and folders of one task folder. */
export const TASK_LAYOUT = {
  taskToml: 'task.toml',
  instruction: 'instruction.md',
  readme: 'README.md',
  trajectory: 'trajectory.json',
  taskData: 'task_data.json',
  environmentDir: 'environment',
  dockerfile: 'environment/Dockerfile',
  /** Only this name is a Compose file (Harbor's `environment/docker-compose.yaml`); a `docker-compose.yml` is an ordinary file. */
  environmentCompose: 'environment/docker-compose.yaml',
  skillsDir: 'environment/skills',
  testsDir: 'tests',
  testSh: 'tests/test.sh',
  verifierPy: 'tests/verifier.py',
  testsDockerfile: 'tests/Dockerfile',
  testsCompose: 'tests/docker-compose.yaml',
  solutionDir: 'solution',
  stepsDir: 'steps',
} as const;

/**
 * The paths inside every sandbox (Task Folder Verifiers; Harbor's `EnvironmentPaths`): where the agent's logs, the
 * verifier's logs and reward, the artifacts, the tests and the oracle's solution live. The one home of these literals.
 */
export const SANDBOX_LAYOUT = {
  logsDir: '/logs',
  agentLogs: '/logs/agent',
  verifierLogs: '/logs/verifier',
  artifactsLogs: '/logs/artifacts',
  trajectory: '/logs/agent/trajectory.json',
  rewardJson: '/logs/verifier/reward.json',
  rewardTxt: '/logs/verifier/reward.txt',
  testsDir: '/tests',
  solutionDir: '/solution',
  /**
   * Berth's own state in the sandbox (detached processes' markers, their claims): outside /logs, which the agent may
   * empty or replace, so nothing the agent does to its logs loses a turn.
   */
  berthState: '/var/lib/berth',
} as const;

/** What a solution folder (the task's `solution/` or a step's) holds. */
export const SOLUTION_FILES = { solveSh: 'solve.sh', answerMd: 'answer.md' } as const;

/** The dataset root's own files (Task Folder Format § Task folder layout). */
export const DATASET_LAYOUT = {
  datasetToml: 'dataset.toml',
  verifierPy: 'verifier.py',
  taskDataPy: 'task_data.py',
} as const;

/** A parameterized template folder's rows (one task per line), beside its task.toml. */
export const TEMPLATE_ROWS = 'tasks.jsonl';

/** The one name Harbor reads as a Compose file, in environment/ and in a verifier's tests folder. */
export const COMPOSE_FILE = 'docker-compose.yaml';

/** The paths of one step (Multi-Step Harbor Tasks, the folder tree; Harbor 0.25, Layout). */
export function stepLayout(name: string) {
  const dir = `${TASK_LAYOUT.stepsDir}/${name}`;
  return {
    dir,
    instruction: `${dir}/instruction.md`,
    testsDir: `${dir}/tests`,
    testSh: `${dir}/tests/test.sh`,
    solutionDir: `${dir}/solution`,
    trajectory: `${dir}/trajectory.json`,
    workdirDir: `${dir}/workdir`,
    /** Harbor's setup script lives in workdir/ (a steps/<name>/setup.sh beside it is not one). */
    setupSh: `${dir}/workdir/setup.sh`,
  } as const;
}

/** `rel` inside a solution folder. */
export const inSolution = (solutionDir: string, file: string): string => `${solutionDir}/${file}`;

/** The absolute path of `rel` inside the task folder at `root`. */
export function inTask(root: string, rel: string): string {
  return root.endsWith('/') ? root + rel : `${root}/${rel}`;
}
