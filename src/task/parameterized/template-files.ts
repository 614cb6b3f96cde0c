// The files of a template folder that become each rendered task's files (NeMo Gym 0.7):
// everything under it, hidden files below the root included, except the editor leftovers the digest skips at any
// depth and, at the root, hidden entries, the rows, the dataset's own files and README.md (it describes the
// template; a task's own README is README.template.md).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DATASET_LAYOUT, TEMPLATE_ROWS } from '../layout.ts';
import { isJunk } from '../snapshot.ts';

export interface TemplateFile {
  /** Relative to the template folder, `/`-separated. */
  rel: string;
  data: Buffer;
  /** Permission bits (solve.sh stays executable). */
  mode: number;
}

const LEFT_OUT_AT_ROOT = new Set<string>([TEMPLATE_ROWS, DATASET_LAYOUT.datasetToml, DATASET_LAYOUT.verifierPy, DATASET_LAYOUT.taskDataPy, 'README.md']);

export function readTemplateFiles(dir: string): TemplateFile[] {
  const out: TemplateFile[] = [];
  const walk = (abs: string, rel: string): void => {
    const entries = readdirSync(abs, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (isJunk(e.name)) continue;
      if (rel === '' && (e.name.startsWith('.') || LEFT_OUT_AT_ROOT.has(e.name))) continue;
      const childAbs = join(abs, e.name);
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      const st = statSync(childAbs);
      if (st.isDirectory()) {
        if (!e.isSymbolicLink()) walk(childAbs, childRel);
      } else if (st.isFile()) {
        out.push({ rel: childRel, data: readFileSync(childAbs), mode: st.mode & 0o777 });
      }
    }
  };
  walk(dir, '');
  return out;
}
