// Discovery and digests: Task Folder Format § Task folder layout; NeMo Gym 0.7
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDigest, discoverTaskFolders, loadDataset, loadTask, TaskRefusal, toSkippedEntry } from '../../src/task/index.ts';
import { silent, taskFiles, tempTree } from './helpers.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function tree(files: Record<string, string>): string {
  const t = tempTree(files);
  cleanups.push(t.cleanup);
  return t.root;
}

describe('discovery (Task Folder Format § Task folder layout)', () => {
  it('a folder with task.toml is one task', () => {
    const root = tree(taskFiles('only'));
    expect(discoverTaskFolders(join(root, 'only'))).toMatchObject([{ id: 'only', path: join(root, 'only'), symlink: false }]);
  });

  it('searches subfolders up to six levels down; deeper ones are not found', () => {
    const root = tree({ ...taskFiles('1/2/3/4/5/six'), ...taskFiles('1/2/3/4/5/6/seven') });
    expect(discoverTaskFolders(root).map((f) => f.id)).toEqual(['six']);
  });

  it('skips hidden folders and never searches inside a task folder', () => {
    const root = tree({ ...taskFiles('.hidden/t'), ...taskFiles('a'), ...taskFiles('a/tests/nested') });
    expect(discoverTaskFolders(root).map((f) => f.id)).toEqual(['a']);
  });

  it('a folder without task.toml is never refused', async () => {
    const root = tree({ ...taskFiles('a'), 'docs/readme.md': 'x' });
    const d = await loadDataset(root, { logger: silent });
    expect(d.refused).toEqual([]);
  });

  it('a task folder that is a symbolic link is refused', async () => {
    const root = tree({ ...taskFiles('real/a'), 'ds/keep.txt': '' });
    symlinkSync(join(root, 'real', 'a'), join(root, 'ds', 'linked'));
    const d = await loadDataset(join(root, 'ds'), { logger: silent });
    expect(d.refused.map((r) => [r.task_id, r.code])).toEqual([['linked', 'symlinked_task_folder']]);
  });

  it('task ids must be unique in a dataset: every folder sharing one is refused', async () => {
    const root = tree({ ...taskFiles('x/same'), ...taskFiles('y/same'), ...taskFiles('other') });
    const d = await loadDataset(root, { logger: silent });
    expect(d.tasks.map((t) => t.id)).toEqual(['other']);
    expect(d.refused.map((r) => r.code)).toEqual(['duplicate_task_id', 'duplicate_task_id']);
    expect(d.refused[0]!.message).toContain('y/same');
  });

  it('a file symlink inside the task that leaves the folder is refused', async () => {
    const root = tree({ ...taskFiles('ds/t'), 'secret.txt': 's' });
    symlinkSync(join(root, 'secret.txt'), join(root, 'ds', 't', 'tests', 'leak.txt'));
    const d = await loadDataset(join(root, 'ds'), { logger: silent });
    expect(d.refused[0]!.code).toBe('symlink_outside_task');
  });

  it('a symlink to a folder inside the task is refused; a file symlink inside it is read', async () => {
    const root = tree(taskFiles('ds/t', { 'environment/data.txt': 'd' }));
    symlinkSync(join(root, 'ds', 't', 'environment', 'data.txt'), join(root, 'ds', 't', 'tests', 'data.txt'));
    expect((await loadDataset(join(root, 'ds'), { logger: silent })).tasks).toHaveLength(1);
    symlinkSync(join(root, 'ds', 't', 'environment'), join(root, 'ds', 't', 'tests', 'env'));
    expect((await loadDataset(join(root, 'ds'), { logger: silent })).refused[0]!.code).toBe('symlink_outside_task');
  });

  it('the dataset root verifier.py grades a single-step task without tests/', async () => {
    const root = tree({ ...taskFiles('t', { 'tests/test.sh': undefined }), 'verifier.py': 'def verify(): return 1\n' });
    const t = (await loadDataset(root, { logger: silent })).tasks[0]!;
    expect(t.verifier.kind).toBe('python');
    expect(t.verifier.script).toBe(join(root, 'verifier.py'));
    expect(t.verifier.python_in_task_tests).toBe(false);
  });

  it('unknown keys are logged once per key across the dataset', async () => {
    const root = tree({ ...taskFiles('a', { 'task.toml': 'odd = 1\n' }), ...taskFiles('b', { 'task.toml': 'odd = 2\n' }) });
    const logged: string[] = [];
    const d = await loadDataset(root, { logger: { warn: (m) => logged.push(m) } });
    expect(d.tasks).toHaveLength(2);
    expect(logged.filter((m) => m.includes('odd'))).toHaveLength(1);
  });
});

describe('digests (NeMo Gym 0.7; Task Folder Format § Dataset settings)', () => {
  async function digestOf(files: Record<string, string>, id = 't'): Promise<string> {
    const root = tree(files);
    const d = await loadDataset(root, { logger: silent });
    const t = d.tasks.find((x) => x.id === id);
    if (!t) throw new Error(d.refused.map((r) => r.message).join('\n'));
    return t.digest;
  }
  const base = taskFiles('t');

  it('is stable, and moves when a covered file changes', async () => {
    const a = await digestOf(base);
    expect(await digestOf(base)).toBe(a);
    for (const [rel, content] of [
      ['t/task.toml', '[agent]\ntimeout_sec = 61\n'],
      ['t/instruction.md', 'other'],
      ['t/environment/extra.txt', 'x'],
      ['t/tests/fixture.json', '{}'],
      ['t/solution/solve.sh', 'false'],
      ['t/README.md', 'readme'],
      ['t/task_data.json', '{}'],
      ['t/environment/.env', 'A=1'],
    ] as const) {
      expect(await digestOf({ ...base, [rel]: content }), rel).not.toBe(a);
    }
  });

  it('ignores files it does not cover: other root files, __pycache__, *.pyc, .DS_Store, editor backups', async () => {
    const a = await digestOf(base);
    for (const rel of ['t/notes.txt', 't/tests/__pycache__/x.cpython.pyc', 't/tests/x.pyc', 't/environment/.DS_Store', 't/tests/test.sh~', 't/tests/.test.sh.swp']) {
      expect(await digestOf({ ...base, [rel]: 'junk' }), rel).toBe(a);
    }
  });

  it('covers dataset settings only once a multiplier or an override is set, then for every task', async () => {
    const plain = await digestOf(base);
    expect(await digestOf({ ...base, 'dataset.toml': '[gym]\nlicense = "MIT"\n[gym.defaults]\nnum_repeats = 5\n' })).toBe(plain);
    const scaled = await digestOf({ ...base, 'dataset.toml': '[gym.defaults]\ntimeout_multiplier = 2\n' });
    expect(scaled).not.toBe(plain);
    const other = await digestOf({ ...base, ...taskFiles('u'), 'dataset.toml': '[gym.tasks."u".verifier]\ntimeout_sec = 5\n' });
    expect(other).not.toBe(plain);
  });

  it('covers the dataset verifier.py for a task it grades', async () => {
    const files = { ...taskFiles('t', { 'tests/test.sh': undefined }), 'verifier.py': 'a' };
    expect(await digestOf(files)).not.toBe(await digestOf({ ...files, 'verifier.py': 'b' }));
  });

  it('checkDigest passes an unchanged task and refuses a moved one with what to do', async () => {
    const root = tree(base);
    const t = await loadTask(join(root, 't'), { logger: silent });
    expect(checkDigest(t.digest, t)).toEqual({ ok: true });
    writeFileSync(join(root, 't', 'instruction.md'), 'edited');
    const moved = await loadTask(join(root, 't'), { logger: silent });
    const check = checkDigest(t.digest, moved);
    expect(check).toMatchObject({ ok: false, code: 'digest_moved', task_id: 't', expected: t.digest, actual: moved.digest, stage: 'load' });
    if (check.ok) throw new Error('unreachable');
    expect(check.reason).toContain('changed since its batch started');
    expect(check.reason).toContain('start a new batch');
  });
});

describe('loadTask', () => {
  it('loads one folder with its dataset\'s settings and throws a typed refusal', async () => {
    const root = tree({ ...taskFiles('t'), ...taskFiles('bad', { 'instruction.md': undefined }), 'dataset.toml': '[gym.defaults]\ntimeout_multiplier = 2\n' });
    const t = await loadTask(join(root, 't'), { datasetRoot: root, logger: silent });
    expect(t.agent.timeout_sec).toBe(120);
    const err = await loadTask(join(root, 'bad'), { logger: silent }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskRefusal);
    expect(toSkippedEntry(err as TaskRefusal)).toEqual({ task_id: 'bad', path: join(root, 'bad'), reason: (err as TaskRefusal).message, stage: 'load' });
  });

  it('a task folder on disk without an instruction is refused, not thrown as another error', async () => {
    const root = tree(taskFiles('t'));
    rmSync(join(root, 't', 'instruction.md'));
    mkdirSync(join(root, 't', 'instruction.md'));
    const err = await loadTask(join(root, 't'), { logger: silent }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TaskRefusal);
  });
});
