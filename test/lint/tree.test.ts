import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers/cli.ts';

const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name);

/**
 * Runs a tool over the tree without blocking this test process: a blocking call starves vitest's own messages to
 * its main process, which time out on a loaded machine. Both tools take minutes when the machine is busy.
 */
function runTool(name: string, args: string[]): Promise<{ output: string; status: number }> {
  return new Promise((resolve) => {
    execFile(bin(name), args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ output: stdout + stderr, status: err ? Number((err as { code?: number }).code ?? 1) : 0 });
    });
  });
}
const TOOL_TIMEOUT_MS = 600_000;

describe('the whole tree', () => {
  it('type-checks under strict TypeScript', async () => {
    const r = await runTool('tsc', ['--noEmit', '-p', repoRoot]);
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  }, TOOL_TIMEOUT_MS);

  it('lints clean (typescript-eslint, no floating promises, deterministic workflows)', async () => {
    // The lint tests plant short-lived probe files in src; they are not part of the tree.
    const r = await runTool('eslint', ['src', 'test', 'bench', 'examples', '--ignore-pattern', 'src/**/lint-probe-*']);
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  }, TOOL_TIMEOUT_MS);
});
