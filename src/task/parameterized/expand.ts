// Expanding a parameterized template folder into one plain task folder per row (docs/parameterized-and-publish.md).
// The rendered folders live under the dataset's `.berth/rendered/` (hidden, so discovery never finds them as tasks
// of their own) and are loaded like any task folder: each has its own digest, and an episode, a retry or a regrade
// reads it again by path. A folder is rewritten only when its rendering changed.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { FoundTask } from '../discovery.ts';
import { TaskRefusal, type RefusalDetail } from '../errors.ts';
import { TASK_LAYOUT, TEMPLATE_ROWS } from '../layout.ts';
import { isJunk } from '../snapshot.ts';
import { renderText, renderedName } from './render.ts';
import { parseTemplateRows, type TemplateRow } from './rows.ts';
import { readTemplateFiles, type TemplateFile } from './template-files.ts';
import { renameTask } from './task-name.ts';

export const RENDERED_DIR = '.berth/rendered';
const DOCS = 'see docs/parameterized-and-publish.md';

export function isTemplateFolder(path: string): boolean {
  const rows = join(path, TEMPLATE_ROWS);
  return existsSync(rows) && statSync(rows).isFile();
}

/** Where the rows of the template at `templatePath` are rendered. */
export function renderedRoot(datasetRoot: string, templatePath: string): string {
  return join(datasetRoot, RENDERED_DIR, relative(datasetRoot, templatePath));
}

type Rendered = Map<string, { data: Buffer; mode: number }>;

function refusal(id: string, path: string, d: Omit<RefusalDetail, 'code' | 'fix'> & { fix: string }): TaskRefusal {
  return new TaskRefusal(id, path, { code: 'parameterized_row', ...d, fix: `${d.fix} (${DOCS})` });
}

/** One row's files, or the refusal naming the row, the file and the placeholder. */
export function renderRow(files: readonly TemplateFile[], row: TemplateRow, templatePath: string): Rendered | TaskRefusal {
  const plain = new Set(files.filter((f) => renderedName(f.rel) === null).map((f) => f.rel));
  const out: Rendered = new Map();
  for (const f of files) {
    const target = renderedName(f.rel);
    if (target === null) {
      const data = f.rel === TASK_LAYOUT.taskToml ? Buffer.from(renameTask(f.data.toString('utf8'), row.taskId)) : f.data;
      out.set(f.rel, { data, mode: f.mode });
      continue;
    }
    if (plain.has(target)) {
      return refusal(row.taskId, templatePath, {
        file: join(templatePath, f.rel), key: '', value: target,
        problem: `${f.rel} renders to ${target}, which the template also holds`, fix: `remove one of ${target} and ${f.rel}`,
      });
    }
    const r = renderText(f.data.toString('utf8'), row.fields);
    if (!r.ok) {
      return refusal(row.taskId, templatePath, {
        file: join(templatePath, f.rel), key: r.placeholder, value: row.taskId,
        problem: `row "${row.taskId}" (${TEMPLATE_ROWS} line ${row.line}): ${r.problem}`, fix: r.fix,
      });
    }
    out.set(target, { data: Buffer.from(r.text), mode: f.mode });
  }
  out.set(TASK_LAYOUT.taskData, { data: Buffer.from(JSON.stringify(row.fields, null, 2) + '\n'), mode: 0o644 });
  return out;
}

function readTree(dir: string): Rendered | null {
  if (!existsSync(dir)) return null;
  const out: Rendered = new Map();
  const walk = (abs: string, rel: string): void => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (isJunk(e.name)) continue;
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) walk(join(abs, e.name), childRel);
      else if (e.isFile()) out.set(childRel, { data: readFileSync(join(abs, e.name)), mode: statSync(join(abs, e.name)).mode & 0o777 });
    }
  };
  walk(dir, '');
  return out;
}

function same(a: Rendered, b: Rendered): boolean {
  if (a.size !== b.size) return false;
  for (const [rel, f] of a) {
    const g = b.get(rel);
    if (!g || g.mode !== f.mode || !g.data.equals(f.data)) return false;
  }
  return true;
}

/** Writes the folder unless it already holds exactly these files; a new rendering replaces the old one whole. */
function writeRendered(dest: string, files: Rendered): void {
  const existing = readTree(dest);
  if (existing && same(existing, files)) return;
  const tmp = `${dest}.tmp-${process.pid}-${Date.now()}`;
  for (const [rel, f] of files) {
    const abs = join(tmp, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, f.data, { mode: f.mode });
  }
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dirname(dest), { recursive: true });
  try {
    renameSync(tmp, dest);
  } catch (e) {
    // Another load rendered the same row at the same moment: fine when it wrote these very files.
    rmSync(tmp, { recursive: true, force: true });
    const now = readTree(dest);
    if (!now || !same(now, files)) throw e;
  }
}

/**
 * Renders again the row a rendered folder holds, from its template as it is now, so that an episode, a retry or a
 * regrade loading the task by path sees an edited template as a plain task's edits are seen. A path outside
 * `.berth/rendered/`, or whose template or row is gone, is left as it is.
 */
export function refreshRendered(taskPath: string, datasetRoot: string): void {
  const base = join(datasetRoot, RENDERED_DIR);
  const rel = relative(base, dirname(taskPath));
  if (rel.startsWith('..') || rel.startsWith('/')) return;
  const templatePath = join(datasetRoot, rel);
  if (!isTemplateFolder(templatePath)) return;
  const id = taskPath.slice(dirname(taskPath).length + 1);
  const row = parseTemplateRows(readFileSync(join(templatePath, TEMPLATE_ROWS), 'utf8')).rows.find((r) => r.taskId === id);
  if (!row) return;
  const rendered = renderRow(readTemplateFiles(templatePath), row, templatePath);
  if (!(rendered instanceof TaskRefusal)) writeRendered(taskPath, rendered);
}

export interface Expansion {
  found: FoundTask[];
  refused: TaskRefusal[];
}

/** Renders every row of the template into its folder; bad rows are refused by id (or line) with the reason. */
export function expandTemplate(template: FoundTask, datasetRoot: string): Expansion {
  const rowsFile = join(template.path, TEMPLATE_ROWS);
  const { rows, problems } = parseTemplateRows(readFileSync(rowsFile, 'utf8'));
  const refused = problems.map((p) =>
    refusal(p.taskId ?? `${template.id}:${TEMPLATE_ROWS}:${p.line}`, template.path, { file: rowsFile, key: p.key, value: p.value, problem: p.problem, fix: p.fix }),
  );
  const files = readTemplateFiles(template.path);
  const root = renderedRoot(datasetRoot, template.path);
  const found: FoundTask[] = [];
  for (const row of rows) {
    const rendered = renderRow(files, row, template.path);
    if (rendered instanceof TaskRefusal) {
      refused.push(rendered);
      continue;
    }
    const dest = join(root, row.taskId);
    writeRendered(dest, rendered);
    found.push({ id: row.taskId, path: dest, symlink: false });
  }
  return { found, refused };
}
