import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMPORT_TABLE } from '../../scripts/eslint/import-table.js';

// docs/design.md section 2 is the layer table a newcomer reads; the lint rule is the one the tree obeys. They say the
// same, row by row, or this fails: a new folder gets its row in both.
const root = join(import.meta.dirname, '..', '..');

function designRows(): Map<string, string> {
  const page = readFileSync(join(root, 'docs', 'design.md'), 'utf8');
  const section = page.slice(page.indexOf('## 2. Layout'), page.indexOf('## 3.'));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const folder = /^`([^`]+?)\/?`$/.exec(cells[1] ?? '')?.[1];
    if (folder && cells.length >= 5) rows.set(folder, cells[3]!);
  }
  return rows;
}

const described = (row: readonly string[]): string => (row.length === 0
  ? 'nothing of src (a bottom module)'
  : row.map((r) => (r.startsWith('types:') ? `${r.slice(6)} (types only)` : r)).join(', '));

describe('docs/design.md section 2 and the import-table rule', () => {
  const rows = designRows();

  it('has one row for every folder of the rule, and none the rule lacks', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(IMPORT_TABLE).sort());
  });

  it.each(Object.entries(IMPORT_TABLE))('%s may import what the page says', (folder, row) => {
    expect(rows.get(folder)).toBe(described(row as string[]));
  });
});
