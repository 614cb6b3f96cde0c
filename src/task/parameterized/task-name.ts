// A rendered task's `[task].name`: Harbor keys a task on it, so every row gets its own, `<org>/<task_id>`, the
// org taken from the template's name (reference: NeMo Gym's scaffold, "its [task].name is rewritten to
// <org>/<task_id> in every rendered task"). A template without a [task].name is left as it is.

const HEADER = /^\s*\[([^\]]+)\]\s*(#.*)?$/;
const NAME = /^(\s*name\s*=\s*)(["'])(.*?)\2(\s*(#.*)?)$/;

/** task.toml's text with `[task].name` rewritten for `taskId`; unchanged when the [task] table has no name. */
export function renameTask(toml: string, taskId: string): string {
  const lines = toml.split('\n');
  let inTask = false;
  for (let i = 0; i < lines.length; i++) {
    const header = HEADER.exec(lines[i]!);
    if (header) {
      inTask = header[1]!.trim() === 'task';
      continue;
    }
    if (!inTask) continue;
    const m = NAME.exec(lines[i]!);
    if (!m) continue;
    const slash = m[3]!.indexOf('/');
    const name = slash >= 0 ? `${m[3]!.slice(0, slash)}/${taskId}` : taskId;
    lines[i] = `${m[1]}"${name}"${m[4] ?? ''}`;
    return lines.join('\n');
  }
  return toml;
}
