import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { berth } from '../helpers/cli.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';

// `berth validate` (issue 7): statuses and exit codes, on the embedded default.
describe('berth validate', () => {
  const results = () => mkdtempSync(join(tmpdir(), 'berth-validate-'));

  it('names each status and exits 1 when a validatable task is not solved or a task is refused', async () => {
    const wrong = echoTask('wrong');
    wrong['wrong/solution/solve.sh'] = '#!/bin/bash\necho nope > out.txt\n';
    const noSolution = echoTask('no-solution');
    delete noSolution['no-solution/solution/solve.sh'];
    const dataset = writeDataset({
      ...echoTask('good'),
      ...wrong,
      ...noSolution,
      ...echoTask('needs-var', 'ok', `${BASE_TOML}[environment.env]\nX = "\${BERTH_VALIDATE_UNSET_VAR}"\n`),
      'broken/task.toml': '[environment\n',
      'broken/instruction.md': 'x\n',
    });
    const r = await berth(['validate', dataset, '--json', '--results', results()]);
    expect(r.code, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout);
    const by = Object.fromEntries(out.tasks.map((t: any) => [t.task_id, t]));
    expect(by.good).toEqual({ task_id: 'good', status: 'solved', reward: 1, failure_kind: null });
    expect(by.wrong).toMatchObject({ status: 'solved-but-scored-0', reward: 0 });
    expect(by['no-solution']).toMatchObject({ status: 'unvalidated', reward: null });
    expect(by['needs-var']).toMatchObject({ status: 'masked', failure_kind: 'harbor:seed_failed' });
    expect(out.refused).toEqual([expect.objectContaining({ task_id: 'broken', stage: 'load' })]);
  });

  it('exits 0 when every validatable task is solved and prints a table', async () => {
    const dataset = writeDataset({ ...echoTask('a'), ...echoTask('b') });
    const r = await berth(['validate', dataset, '--results', results()]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^a\s+solved\s+1\.000/m);
    expect(r.stdout).toMatch(/^b\s+solved\s+1\.000/m);
  });

  it('exits 2 when nothing loads', async () => {
    const dataset = writeDataset({ 'only/task.toml': 'not = [valid\n', 'only/instruction.md': 'x\n' });
    const r = await berth(['validate', dataset, '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).refused[0]).toMatchObject({ task_id: 'only', stage: 'load' });
  });
});

// Task Folder Format § What the loader refuses: "When no task loads at all, it prints the error instead of a
// table and exits 2."
describe('berth validate with nothing loaded', () => {
  it('prints the error, with each refused task and its reason, instead of a table, and exits 2', async () => {
    const dataset = writeDataset({ 'only/task.toml': 'not = [valid\n', 'only/instruction.md': 'x\n' });
    const r = await berth(['validate', dataset]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`berth: No task of ${dataset} can run.`);
    expect(r.stderr).toMatch(/ {2}only: .*task\.toml: line 1, column \d+: not valid TOML/);
  });

  it('a folder without any task folder says so', async () => {
    const dataset = writeDataset({ 'notes/readme.txt': 'no tasks here\n' });
    const r = await berth(['validate', dataset]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`berth: No task folder found in ${dataset}: a task folder holds task.toml`);
  });
});
