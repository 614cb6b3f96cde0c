// The variables Harbor's Docker environment interpolates a task's compose file with (its ComposeInfraEnvVars and the
// log-path variables it sets when it bind-mounts main's log folders), given Berth's own values, so a file that
// restates Harbor's `main` reads under Berth as the task means it. As under Harbor, they win over the worker's
// environment and [environment].env. TEST_DIR, which Harbor's Terminal-Bench mapper writes into main and Harbor
// leaves unset, is only a default: the tests folder, unless the worker or the task sets it.
import { availableParallelism, totalmem } from 'node:os';
import { inTask, SANDBOX_LAYOUT, TASK_LAYOUT } from './layout.ts';
import type { Task } from './model.ts';

/** The worker host's size: the limits a task without cpus or memory_mb runs at (that is, none). */
export interface HostSize {
  readonly cpus: number;
  readonly memoryMb: number;
}

export function thisHostSize(): HostSize {
  return { cpus: availableParallelism(), memoryMb: Math.floor(totalmem() / 2 ** 20) };
}

const LOG_FOLDERS = [
  ['AGENT_LOGS', SANDBOX_LAYOUT.agentLogs],
  ['VERIFIER_LOGS', SANDBOX_LAYOUT.verifierLogs],
  ['ARTIFACTS', SANDBOX_LAYOUT.artifactsLogs],
] as const;

/** `mainImage`: the image main runs (what Harbor tags its build of main with, or its prebuilt image). */
export function harborComposeVariables(task: Pick<Task, 'path' | 'environment'>, mainImage: string, host: HostSize = thisHostSize()): Record<string, string> {
  const vars: Record<string, string> = {
    MAIN_IMAGE_NAME: mainImage,
    PREBUILT_IMAGE_NAME: mainImage,
    CONTEXT_DIR: inTask(task.path, TASK_LAYOUT.environmentDir),
    // Compose refuses a blank limit: a task without one gets the host's size, which limits nothing.
    CPUS: String(task.environment.cpus ?? host.cpus),
    MEMORY: `${task.environment.memory_mb ?? host.memoryMb}M`,
  };
  // Harbor's host folder and the folder in main; Berth keeps these folders in main, so main's bind of one onto
  // itself is dropped (compose-model.ts) and a sidecar's is refused at load (compose.ts).
  for (const [name, folder] of LOG_FOLDERS) {
    vars[`ENV_${name}_PATH`] = folder;
    vars[`HOST_${name}_PATH`] = folder;
  }
  return vars;
}

/** What Compose interpolates the task's file with: TEST_DIR's default, the worker's environment, the task's, Harbor's. */
export function composeInterpolationEnv(
  task: Pick<Task, 'path' | 'environment'>, mainImage: string, hostEnv: NodeJS.ProcessEnv, taskEnv: Readonly<Record<string, string>>,
): NodeJS.ProcessEnv {
  return { TEST_DIR: SANDBOX_LAYOUT.testsDir, ...hostEnv, ...taskEnv, ...harborComposeVariables(task, mainImage) };
}
