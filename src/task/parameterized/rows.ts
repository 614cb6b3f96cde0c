// The rows of a parameterized template (Task Folder Verifiers § Python verifiers, `task_data` "from
// task_data.json or a parameterized row"; NeMo Gym 0.7, Typed fields): one JSON object per
// line of tasks.jsonl, `{"task_id": ..., "task_data": {...}}` or the fields flat beside `task_id`.

export interface TemplateRow {
  /** 1-based line of tasks.jsonl. */
  line: number;
  taskId: string;
  fields: Record<string, unknown>;
}

export interface RowProblem {
  line: number;
  /** The row's task_id when it has a usable one, else null. */
  taskId: string | null;
  key: string;
  value?: unknown;
  problem: string;
  fix: string;
}

/** A task id is a folder name: letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseLine(text: string, line: number): TemplateRow | RowProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { line, taskId: null, key: '', problem: `line ${line} is not JSON (${(e as Error).message})`, fix: 'write one JSON object per line' };
  }
  if (!isObject(value)) return { line, taskId: null, key: '', value, problem: `line ${line} is not a JSON object`, fix: 'write one JSON object per line, with a "task_id"' };
  const id = value.task_id;
  if (typeof id !== 'string' || !TASK_ID_PATTERN.test(id)) {
    return {
      line, taskId: null, key: 'task_id', value: id,
      problem: id === undefined ? `line ${line} has no task_id` : `line ${line}: the task_id is not a folder name`,
      fix: 'give every row a "task_id" of letters, digits, ".", "_" or "-", starting with a letter or digit',
    };
  }
  const rest = Object.keys(value).filter((k) => k !== 'task_id');
  if (!('task_data' in value)) return { line, taskId: id, fields: Object.fromEntries(rest.map((k) => [k, value[k]])) };
  if (!isObject(value.task_data)) {
    return { line, taskId: id, key: 'task_data', value: value.task_data, problem: `row "${id}": task_data is not a JSON object`, fix: 'make task_data an object of the task\'s fields' };
  }
  const beside = rest.filter((k) => k !== 'task_data');
  if (beside.length > 0) {
    return {
      line, taskId: id, key: beside[0]!, value: beside,
      problem: `row "${id}" has both task_data and fields beside it (${beside.join(', ')})`,
      fix: 'put every field inside task_data, or write them all flat beside task_id without task_data',
    };
  }
  return { line, taskId: id, fields: value.task_data };
}

/** Every row of tasks.jsonl (blank lines skipped), and a problem for each bad or repeated one. */
export function parseTemplateRows(text: string): { rows: TemplateRow[]; problems: RowProblem[] } {
  const rows: TemplateRow[] = [];
  const problems: RowProblem[] = [];
  const seen = new Map<string, number>();
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const r = parseLine(raw, i + 1);
    if (!('fields' in r)) return void problems.push(r);
    const first = seen.get(r.taskId);
    if (first !== undefined) {
      problems.push({ line: r.line, taskId: r.taskId, key: 'task_id', value: r.taskId, problem: `task_id "${r.taskId}" is also the id of line ${first}`, fix: 'give every row its own task_id' });
      return;
    }
    seen.set(r.taskId, r.line);
    rows.push(r);
  });
  return { rows, problems };
}
