// The task's MCP servers and skills folder, as the seed writes them into the agent's sandbox for harnesses
// that read them (NeMo Gym 0.7: `{mcp_servers, skills_dir}`, folder 755, file 644,
// as root, only when the task declares either). The command agent gets the file's path in BERTH_TASK_FILE.
import { posix } from 'node:path';
import type { Task } from '../task/index.ts';

export const TASK_FILE = '/tmp/.berth/task.json';
export const TASK_FILE_ENV = 'BERTH_TASK_FILE';

/** skills_dir as the sandbox sees it: a relative one resolves in the working directory. */
export function skillsDirIn(task: Task, workdir: string): string | null {
  const dir = task.environment.skills_dir;
  if (dir === null) return null;
  return posix.isAbsolute(dir) ? posix.normalize(dir) : posix.join(workdir, dir);
}

/** The file's contents, or null when the task declares neither MCP servers nor a skills folder. */
export function taskFileContent(task: Task, workdir: string): { mcp_servers: Task['environment']['mcp_servers']; skills_dir: string | null } | null {
  const skills = skillsDirIn(task, workdir);
  if (task.environment.mcp_servers.length === 0 && skills === null) return null;
  return { mcp_servers: task.environment.mcp_servers, skills_dir: skills };
}
