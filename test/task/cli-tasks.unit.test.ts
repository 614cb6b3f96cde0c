// `berth tasks DATASET [--json]` (issue 3, CLI; skipped.json entry shape of docs/design.md section 7).
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listTasks } from '../../src/client/tasks.ts';
import { registerTasks, renderTasksReport } from '../../src/cli/tasks.ts';
import { CORPUS, taskFiles, tempTree } from './helpers.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

async function run(args: string[]): Promise<{ out: string; err: string; code: number | string | undefined }> {
  let out = '';
  let err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  const program = new Command('berth').exitOverride();
  registerTasks(program);
  await program.parseAsync(['node', 'berth', 'tasks', ...args]);
  vi.restoreAllMocks();
  return { out, err, code: process.exitCode };
}

describe('berth tasks', () => {
  it('listTasks returns loaded tasks and refused entries in the skipped.json shape', async () => {
    const report = await listTasks(`${CORPUS}/harbor-verifier-mode-matrix`);
    expect(report.tasks.map((t) => t.task_id)).toEqual(['multistep-all-separate', 'multistep-top-separate-mixed', 'multistep-top-shared-mixed', 'separate-implicit', 'separate-reuse-env']);
    expect(report.tasks[3]).toMatchObject({ multi_step: false, steps: 1, verifier_kind: 'test_sh', verifier_mode: 'separate', image_mode: 'pull' });
    expect(report.refused).toEqual([]);
    const t = tempTree({ ...taskFiles('good'), ...taskFiles('bad', { 'instruction.md': undefined }) });
    cleanups.push(t.cleanup);
    const mixed = await listTasks(t.root);
    expect(mixed.refused.map((r) => r.task_id)).toEqual(['bad']);
    for (const r of mixed.refused) {
      expect(Object.keys(r).sort()).toEqual(['path', 'reason', 'stage', 'task_id']);
      expect(r.stage).toBe('load');
    }
  });

  it('--json prints the report; exit 0 when something loads', async () => {
    const { out, code } = await run([`${CORPUS}/harbor-examples`, '--json']);
    const parsed = JSON.parse(out) as { tasks: Array<{ task_id: string }>; refused: Array<{ task_id: string; reason: string }> };
    expect(parsed.tasks.map((t) => t.task_id)).toContain('hello-multi-step-simple');
    expect(parsed.tasks.map((t) => t.task_id)).toContain('separate-verifier-multi-step');
    expect(parsed.tasks.map((t) => t.task_id)).toContain('sidecar-artifacts');
    expect(parsed.refused).toEqual([]);
    expect(code).toBe(0);
  });

  it('the table names single/multi-step, verifier kind and mode and image mode, then the refused with reasons', async () => {
    const report = await listTasks(`${CORPUS}/harbor-examples`);
    const text = renderTasksReport(report);
    expect(text).toMatch(/hello-multi-step-simple\s+multi-step \(2\)\s+test_sh\s+shared\s+pull/);
    expect(text).toMatch(/separate-verifier-environment\s+single\s+test_sh\s+separate\s+pull/);
    expect(text).toContain('12 loaded, 0 refused');
    const t = tempTree({ ...taskFiles('good'), ...taskFiles('bad', { 'instruction.md': undefined }) });
    cleanups.push(t.cleanup);
    const mixed = renderTasksReport(await listTasks(t.root));
    expect(mixed).toMatch(/good\s+single/);
    expect(mixed).toMatch(/bad: .*instruction\.md/);
  });

  it('refuses none of the 27 corpus tasks (issues 13 and 14: Compose, multi-step and network tasks all load)', async () => {
    const report = await listTasks(CORPUS);
    expect(report.refused).toEqual([]);
    expect(report.tasks).toHaveLength(27);
  });

  it('exit 2 when nothing loads', async () => {
    const t = tempTree(taskFiles('a', { 'instruction.md': undefined }));
    cleanups.push(t.cleanup);
    const { out, code } = await run([t.root]);
    expect(out).toContain('0 loaded, 1 refused');
    expect(code).toBe(2);
  });

  it('a dataset-level refusal prints the error and exits 2', async () => {
    const t = tempTree({ ...taskFiles('a'), 'dataset.toml': '[gym]\ntype = "example"\n' });
    cleanups.push(t.cleanup);
    const { err, code } = await run([t.root]);
    expect(err).toContain('gym.type');
    expect(code).toBe(2);
  });
});
