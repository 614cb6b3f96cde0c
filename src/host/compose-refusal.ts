// A Compose task the worker's driver cannot run as written (a key it does not map) is refused at plan, before any
// sandbox work, as a missing capability is: the driver reads the file the way the seed will (Compose's own config).
import { join } from 'node:path';
import type { SandboxDriver } from '../sandbox/index.ts';
import { composeInterpolationEnv, inTask, TASK_LAYOUT, type Task } from '../task/index.ts';
import { environmentOf } from './seed-agent.ts';

/** The driver's refusal of the task's group, or null (no compose file, or a driver that runs whatever loads). */
export async function composeRefusal(driver: SandboxDriver, task: Task, hostEnv: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  if (!task.compose || !driver.groupRefusal) return null;
  const image = task.image.image ?? 'berth-base:bookworm';
  return driver.groupRefusal({
    project: 'berth-plan',
    composeFile: join(task.path, task.compose.file),
    projectDir: inTask(task.path, TASK_LAYOUT.environmentDir),
    // As the seed interpolates it (seed-compose.ts).
    interpolationEnv: composeInterpolationEnv(task, image, hostEnv, environmentOf(task, hostEnv)),
    main: { image },
  });
}
