import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHIM_SOURCE_DIR, shimFiles, shimInputs, shimLayout } from '../../src/verify/shim.ts';

describe('shimFiles (nemo_gym.data.tasks.harbor.python_verifier write_shim layout)', () => {
  it('places the shim under /tests with explicit world-readable modes', async () => {
    const files = await shimFiles();
    expect(files.map((f) => [f.path, f.mode.toString(8)])).toEqual([
      ['test.sh', '755'],
      ['.ng/run_verifier.py', '644'],
      ['.ng/nemo_gym/__init__.py', '644'],
      ['.ng/nemo_gym/verifiers/__init__.py', '644'],
      ['.ng/nemo_gym/verifiers/files.py', '644'],
    ]);
    for (const f of files) expect(f.mode & 0o444).toBe(0o444);
  });

  it('reads the contents from src/verify/shim', async () => {
    const files = await shimFiles();
    const runner = files.find((f) => f.path === shimLayout.runner)!;
    expect(runner.content.equals(await readFile(path.join(SHIM_SOURCE_DIR, 'run_verifier.py')))).toBe(true);
    expect(files.find((f) => f.path === 'test.sh')!.content.toString()).toMatch(/^#!\/usr\/bin\/env bash\n/);
  });

  it('never ships the shim tests or bytecode', async () => {
    for (const f of await shimFiles()) expect(f.path).not.toMatch(/tests\/|__pycache__|\.pyc$/);
  });

  it('every file sits in a declared directory', async () => {
    for (const f of await shimFiles()) {
      const dir = path.posix.dirname(f.path);
      if (dir !== '.') expect(shimLayout.directories).toContain(dir);
    }
  });
});

describe('shimInputs', () => {
  it('writes task_data.json always, response.json and the dataset verifier only when given', () => {
    expect(shimInputs({ taskData: { a: 1 } }).map((f) => f.path)).toEqual(['.ng/task_data.json']);
    const all = shimInputs({ taskData: {}, response: { output: [] }, datasetVerifier: 'def verify():\n    return 1\n' });
    expect(all.map((f) => [f.path, f.mode])).toEqual([
      ['.ng/task_data.json', 0o644],
      ['.ng/response.json', 0o644],
      ['.ng/verifier.py', 0o644],
    ]);
    expect(JSON.parse(all[1]!.content.toString())).toEqual({ output: [] });
  });
});
