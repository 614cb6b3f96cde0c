// Runs the shim's Python unit tests with the machine's python3, and checks test.sh's Python floor
// (nemo_gym.data.tasks.harbor.python_verifier: "an older one is refused with the version named, exit 127, no reward").

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { responseFromText, responseText } from '../../src/verify/response.ts';
import { SHIM_SOURCE_DIR, shimFiles, shimInputs } from '../../src/verify/shim.ts';

function realPython3(): string {
  const r = spawnSync('python3', ['-c', 'import sys; sys.stdout.write(sys.executable)'], { encoding: 'utf8' });
  if (r.status !== 0 || !r.stdout) throw new Error(`python3 is needed for these tests: ${r.stderr}`);
  return r.stdout;
}

function pyenvPython(prefix: string): string | undefined {
  const root = path.join(os.homedir(), '.pyenv', 'versions');
  if (!existsSync(root)) return undefined;
  const version = readdirSync(root).find((v) => v.startsWith(prefix));
  const exe = version && path.join(root, version, 'bin', 'python3');
  return exe && existsSync(exe) ? exe : undefined;
}

function runUnittest(python: string): { ran: number; result: SpawnSyncReturns<string> } {
  const result = spawnSync(
    python,
    ['-B', '-m', 'unittest', 'discover', '-s', path.join(SHIM_SOURCE_DIR, 'tests'), '-p', 'test_*.py'],
    { encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeout: 300_000 },
  );
  const ran = /^Ran (\d+) tests? in /m.exec(result.stderr);
  return { ran: ran ? Number(ran[1]) : 0, result };
}

describe('shim Python unit tests (src/verify/shim/tests)', () => {
  it('pass with the machine python3', () => {
    const { ran, result } = runUnittest(realPython3());
    expect(ran, result.stderr).toBeGreaterThan(0);
    expect(result.stderr).not.toMatch(/^FAILED/m);
    expect(result.stderr).toMatch(/^OK/m);
    expect(result.status, result.stderr).toBe(0);
  });

  it('pass with Python 3.8, the floor (pyenv\'s, which this machine kind has)', () => {
    const py38 = pyenvPython('3.8.');
    expect(py38, 'no Python 3.8 under ~/.pyenv/versions; this machine kind ships one').toBeDefined();
    const { ran, result } = runUnittest(py38!);
    expect(ran, result.stderr).toBeGreaterThan(0);
    expect(result.stderr).toMatch(/^OK/m);
    expect(result.status, result.stderr).toBe(0);
  });
});

describe('shim test.sh: finding a Python of at least 3.8 (nemo_gym.data.tasks.harbor.python_verifier)', () => {
  let root: string;
  let tests: string;
  let rewards: string;
  let bin: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'berth-shim-'));
    tests = path.join(root, 'tests');
    rewards = path.join(root, 'logs', 'verifier');
    bin = path.join(root, 'bin');
    await mkdir(rewards, { recursive: true });
    await mkdir(bin);
    for (const file of [...(await shimFiles()), ...shimInputs({ taskData: { answer: '4' } })]) {
      const target = path.join(tests, file.path);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, file.content);
      await chmod(target, file.mode);
    }
    await writeFile(path.join(tests, 'verifier.py'), 'def verify(task_data):\n    return float(task_data["answer"] == "4")\n');
    // A reward planted before verification must be gone whatever happens next.
    await writeFile(path.join(rewards, 'reward.txt'), '1\n');
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function fake(name: string, version: string): Promise<void> {
    const file = path.join(bin, name);
    await writeFile(file, `#!/bin/sh\necho ${version}\n`);
    await chmod(file, 0o755);
  }

  // Only what test.sh needs besides Python: rm.
  async function onlyRm(): Promise<void> {
    await symlink(spawnSync('bash', ['-c', 'command -v rm'], { encoding: 'utf8' }).stdout.trim(), path.join(bin, 'rm'));
  }

  function runTestSh(PATH: string): SpawnSyncReturns<string> {
    const env: NodeJS.ProcessEnv = { HOME: process.env['HOME'], PATH, BERTH_TESTS_DIR: tests, BERTH_REWARD_DIR: rewards };
    return spawnSync('/bin/bash', [path.join(tests, 'test.sh')], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  }

  async function rewardFiles(): Promise<string[]> {
    return (await readdir(rewards)).filter((f) => f.startsWith('reward'));
  }

  it('an old python3 first on PATH: exit 127, the version named on stderr, no reward', async () => {
    await fake('python3', '3.6.9');
    const r = runTestSh(`${bin}:${process.env['PATH']}`);
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('python3 is Python 3.6.9');
    expect(r.stderr).toContain('3.8 or newer');
    expect(await rewardFiles()).toEqual([]);
  });

  it('python3 is used when present, even if a newer `python` follows it', async () => {
    await fake('python3', '3.7.16');
    await symlink(realPython3(), path.join(bin, 'python'));
    const r = runTestSh(`${bin}:${process.env['PATH']}`);
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('Python 3.7.16');
  });

  it('without python3, an old `python` (Python 2) is refused by version', async () => {
    await onlyRm();
    await fake('python', '2.7.18');
    const r = runTestSh(bin);
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('python is Python 2.7.18');
    expect(await rewardFiles()).toEqual([]);
  });

  it('without python3, a `python` of 3.8 or newer grades', async () => {
    await onlyRm();
    await symlink(realPython3(), path.join(bin, 'python'));
    const r = runTestSh(bin);
    expect(r.status, r.stderr).toBe(0);
    expect(await rewardFiles()).toEqual(['reward.txt']);
  });

  it('no Python at all: exit 127 saying so, no reward', async () => {
    await onlyRm();
    const r = runTestSh(bin);
    expect(r.status).toBe(127);
    expect(r.stderr).toContain('neither python3 nor python');
    expect(await rewardFiles()).toEqual([]);
  });

  it('an unreadable version is refused, not guessed', async () => {
    await fake('python3', 'garbage');
    const r = runTestSh(`${bin}:${process.env['PATH']}`);
    expect(r.status).toBe(127);
    expect(r.stderr).toContain("got 'garbage'");
  });

  it('a real Python 3.6 (pyenv\'s, which this machine kind has) is refused with its version', async () => {
    const py36 = pyenvPython('3.6.');
    expect(py36, 'no Python 3.6 under ~/.pyenv/versions; this machine kind ships one').toBeDefined();
    await symlink(py36!, path.join(bin, 'python3'));
    const r = runTestSh(`${bin}:${process.env['PATH']}`);
    expect(r.status).toBe(127);
    expect(r.stderr).toMatch(/python3 is Python 3\.6\.\d+/);
    expect(await rewardFiles()).toEqual([]);
  });

  it('the machine python3 grades through the uploaded layout', async () => {
    await symlink(realPython3(), path.join(bin, 'python3'));
    const r = runTestSh(`${bin}:${process.env['PATH']}`);
    expect(r.status, r.stderr).toBe(0);
    expect(await rewardFiles()).toEqual(['reward.txt']);
  });
});

describe('final_text (Python) and responseText (TypeScript) agree', () => {
  const responses: unknown[] = [
    null,
    'text',
    {},
    { output: [] },
    { output: 'x' },
    responseFromText('42'),
    { output: [{ type: 'message', role: 'user', content: [{ type: 'output_text', text: 'q' }] }] },
    {
      output: [
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
        { type: 'function_call', name: 'f' },
      ],
    },
    { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x' }, { type: 'refusal' }, { type: 'output_text', text: 'y' }] }] },
    { output: [{ type: 'message', role: 'assistant', content: 'plain' }] },
    { output: [{ role: 'assistant', content: 'no type' }] },
    { output: [{ type: null, role: 'assistant', content: 'null type' }] },
    { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 7 }] }] },
    { output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] }, { type: 'message', role: 'assistant', content: [] }] },
  ];

  it('on a table of responses', () => {
    const script =
      'import json, sys\nfrom nemo_gym.verifiers import final_text\n' +
      'print(json.dumps([final_text(r) for r in json.load(sys.stdin)]))\n';
    const r = spawnSync(realPython3(), ['-B', '-c', script], {
      input: JSON.stringify(responses),
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: SHIM_SOURCE_DIR },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(responses.map((x) => responseText(x)));
  });
});
