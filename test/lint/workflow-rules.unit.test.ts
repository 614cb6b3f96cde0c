import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const probe = join(root, 'src', 'workflows', 'lint-probe.ts');

// The folder's own rules apply to text linted under a path in src/workflows; nothing is written there. The path is on
// no disk, so the type-aware rules take it into the default project (tsconfig.json) instead of the tree's.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: { languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['src/workflows/lint-probe.ts'], defaultProject: 'tsconfig.json' } } } },
});

async function lintWorkflowSource(source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: probe });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint rules for workflow code (docs/design.md section 2: workflows import nothing with I/O)', () => {
  it.each([
    ["import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n", 'no-restricted-imports'],
    ["import { spawn } from 'child_process';\nexport const x = spawn;\n", 'no-restricted-imports'],
    ["import Docker from 'dockerode';\nexport const x = Docker;\n", 'no-restricted-imports'],
    ["import { loadDataset } from '../task/index.ts';\nexport const x = loadDataset;\n", 'berth/import-table'],
    ['export const x = process.env.HOME;\n', 'no-restricted-globals'],
    ['export async function f(p: () => Promise<void>) { p(); }\n', '@typescript-eslint/no-floating-promises'],
  ])('refuses %j', async (source, rule) => {
    const messages = await lintWorkflowSource(source);
    expect(messages.some((m) => m.startsWith(`${rule}:`))).toBe(true);
  });

  it('accepts deterministic workflow code and type-only imports of activities', async () => {
    const messages = await lintWorkflowSource(
      "import type * as acts from '../activities/shared.ts';\nimport { sleep } from '@temporalio/workflow';\nexport type A = typeof acts;\nexport async function f() { await sleep(1); }\n",
    );
    expect(messages).toEqual([]);
  });
});
