// At seed, after the sandbox is ready: the task file (MCP servers, skills folder) and environment/skills/
// uploaded into skills_dir when that folder is missing or empty (Task Folder Format § [environment]).
import { TASK_FILE, skillsDirIn, taskFileContent } from '../agents/task-file.ts';
import { shellQuote, type SandboxHandle, type SandboxProvider } from '../sandbox/index.ts';
import type { Task } from '../task/index.ts';

const NEEDS_SKILLS = 'berth-skills:upload';

export async function deliverTaskExtras(provider: SandboxProvider, handle: SandboxHandle, task: Task): Promise<void> {
  const content = taskFileContent(task, handle.workdir);
  if (!content) return;
  const dir = TASK_FILE.slice(0, TASK_FILE.lastIndexOf('/'));
  const b64 = Buffer.from(JSON.stringify(content, null, 2)).toString('base64');
  const skills = task.skills_source !== null ? skillsDirIn(task, handle.workdir) : null;
  const lines = [
    'set -e', 'umask 022', `mkdir -p ${shellQuote(dir)}`, `chmod 755 ${shellQuote(dir)}`,
    `echo ${b64} | base64 -d > ${shellQuote(TASK_FILE)}.tmp`, `chmod 644 ${shellQuote(TASK_FILE)}.tmp`, `mv ${shellQuote(TASK_FILE)}.tmp ${shellQuote(TASK_FILE)}`,
  ];
  if (skills) lines.push(`if [ -z "$(ls -A ${shellQuote(skills)} 2>/dev/null)" ]; then echo ${NEEDS_SKILLS}; fi`);
  const res = await provider.exec(handle, { command: lines.join('\n'), user: 'root', workdir: '/' });
  if (res.exitCode !== 0) throw new Error(`writing ${TASK_FILE} in the sandbox failed (exit ${res.exitCode}): ${res.stderr.trim()}`);
  if (skills && res.stdout.includes(NEEDS_SKILLS)) await provider.upload(handle, task.skills_source!, skills, { owner: handle.user });
}
