// Issue 37, `berth publish DATASET OUT --harbor` (Task Folder Format § Additional features; Task Folder Verifiers
// § Python verifiers and § Reference answers; nemo_gym.data.tasks.harbor.python_verifier): what the copy holds, and what it refuses.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadDataset } from '../../src/task/index.ts';
import { solveShForAnswer } from '../../src/publish/answer.ts';
import { publishHarbor } from '../../src/publish/harbor-copy.ts';
import { dropKey, dropTables } from '../../src/publish/toml-lines.ts';
import { declaredArguments } from '../../src/publish/verify-arguments.ts';
import { silent, tempTree } from '../task/helpers.ts';

const TOML = '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n';
const PY_TASK = (verifier: string, toml = TOML) => ({ 'task.toml': toml, 'instruction.md': 'x\n', 'tests/verifier.py': verifier, 'solution/answer.md': 'forty-two\n' });

async function publish(files: Record<string, string>) {
  const t = tempTree(files);
  onTestFinished(t.cleanup);
  const d = await loadDataset(t.root, { logger: silent });
  const out = join(mkdtempSync(join(tmpdir(), 'berth-pub-')), 'out');
  onTestFinished(() => { rmSync(out, { recursive: true, force: true }); });
  return { root: t.root, out, result: await publishHarbor({ root: d.root, tasks: d.tasks, refused: d.refused.map((r) => ({ task_id: r.task_id, reason: r.message })) }, out) };
}

describe('verify\'s declared parameters, read without running the module', () => {
  it.each([
    ['def verify(workspace, task_data):\n', ['workspace', 'task_data']],
    ['async def verify(workspace: Path, response: dict | None = None) -> float:\n', ['workspace', 'response']],
    ['def verify(\n    workspace,  # the (working) dir\n    *,\n    state=dict(a=(1, 2)),\n    **kwargs,\n):\n', ['workspace', 'state', 'kwargs']],
    ['def verify(a, /, b=")", *rest):\n', ['a', 'b', 'rest']],
    ['def helper():\n    def verify(response): ...\n', null],
    ['verify = functools.partial(_grade, mode=1)\n', null],
  ])('%j', (src, want) => expect(declaredArguments(src)).toEqual(want));
});

describe('TOML edits that keep the rest as written', () => {
  it('drops [gym] and its subtables, nothing else', () => {
    const text = '[dataset]\nname = "o/d"\n# kept\n[gym]\nlicense = "mit"\n[gym.tasks."a".verifier]\ninputs = ["x"]\n[[gym.extra]]\nk = 1\n[other]\nk = 2\n';
    expect(dropTables(text, 'gym')).toBe('[dataset]\nname = "o/d"\n# kept\n[other]\nk = 2\n');
  });
  it('drops one key of one table; null when absent', () => {
    expect(dropKey('[environment]\ndocker_image = "x"\nworkdir = "/app"\n', 'environment', 'docker_image')).toBe('[environment]\nworkdir = "/app"\n');
    expect(dropKey('[verifier.environment]\ndocker_image = "x"\n', 'environment', 'docker_image')).toBeNull();
  });
});

describe('answer.md as a solve.sh', () => {
  it('writes the exact bytes, any byte, to answer.md in the working directory', () => {
    const answer = Buffer.from([0x34, 0x32, 0x0a, 0x00, 0xff, 0x27, 0x22]);
    const dir = mkdtempSync(join(tmpdir(), 'berth-answer-'));
    onTestFinished(() => { rmSync(dir, { recursive: true, force: true }); });
    execFileSync('bash', ['-c', solveShForAnswer(answer)], { cwd: dir });
    expect(readFileSync(join(dir, 'answer.md')).equals(answer)).toBe(true);
  });
});

describe('the copy', () => {
  it('a Python verifier graded through the shim in tests/, with the task\'s fields and no response; answer.md as solve.sh', async () => {
    const { out, result } = await publish({ ...Object.fromEntries(Object.entries(PY_TASK('def verify(workspace, task_data):\n    return 1.0\n')).map(([k, v]) => [`t/${k}`, v])), 't/task_data.json': '{"q": 1}' });
    expect(result.written).toEqual(['t']);
    const t = join(out, 't');
    expect(readFileSync(join(t, 'tests/test.sh'), 'utf8')).toContain('run_verifier.py');
    expect(statSync(join(t, 'tests/test.sh')).mode & 0o111).not.toBe(0);
    expect(readFileSync(join(t, 'tests/verifier.py'), 'utf8')).toContain('def verify');
    expect(JSON.parse(readFileSync(join(t, 'tests/.ng/task_data.json'), 'utf8'))).toEqual({ q: 1 });
    expect(existsSync(join(t, 'tests/.ng/response.json'))).toBe(false);
    expect(existsSync(join(t, 'tests/.ng/nemo_gym/verifiers/files.py'))).toBe(true);
    expect(existsSync(join(t, 'solution/answer.md'))).toBe(false);
    expect(readFileSync(join(t, 'solution/solve.sh'), 'utf8')).toContain(Buffer.from('forty-two\n').toString('base64'));
  });

  it('a dataset-level verifier.py travels as tests/.ng/verifier.py of a task without tests/', async () => {
    const { out, result } = await publish({ 'verifier.py': 'def verify(workspace):\n    return 0.5\n', 't/task.toml': TOML, 't/instruction.md': 'x\n' });
    expect(result.written).toEqual(['t']);
    expect(readFileSync(join(out, 't/tests/.ng/verifier.py'), 'utf8')).toContain('return 0.5');
    expect(existsSync(join(out, 't/tests/test.sh'))).toBe(true);
  });

  it('a prebuilt image with a workdir is built with it (Harbor does not create the workdir); dataset.toml loses [gym]', async () => {
    const { out } = await publish({
      'dataset.toml': '[dataset]\nname = "o/d"\n[gym]\nlicense = "MIT"\n',
      't/task.toml': TOML, 't/instruction.md': 'x\n', 't/tests/test.sh': '#!/bin/bash\n',
    });
    expect(readFileSync(join(out, 't/environment/Dockerfile'), 'utf8')).toMatch(/FROM berth-base:bookworm\nWORKDIR \/app\n$/);
    expect(readFileSync(join(out, 't/task.toml'), 'utf8')).not.toContain('docker_image');
    expect(readFileSync(join(out, 'dataset.toml'), 'utf8')).toBe('[dataset]\nname = "o/d"\n');
  });

  it('a task with its own Dockerfile, or environment/ files Harbor uploads into the workdir, is left as it is', async () => {
    const { out } = await publish({ 't/task.toml': TOML, 't/instruction.md': 'x\n', 't/tests/test.sh': '#!/bin/bash\n', 't/environment/data.txt': 'd\n' });
    expect(existsSync(join(out, 't/environment/Dockerfile'))).toBe(false);
    expect(readFileSync(join(out, 't/task.toml'), 'utf8')).toContain('docker_image');
  });

  it('template rows are published as their rendered tasks', async () => {
    const { out, result } = await publish({
      'task.toml': '[task]\nname = "o/tpl"\n' + TOML, 'instruction.template.md': 'Say {{ word }}\n', 'tests/test.sh': '#!/bin/bash\n',
      'tasks.jsonl': '{"task_id": "a", "word": "hi"}\n{"task_id": "b", "word": "yo"}\n',
    });
    expect(result.written).toEqual(['a', 'b']);
    expect(readFileSync(join(out, 'b/instruction.md'), 'utf8')).toBe('Say yo\n');
    expect(readFileSync(join(out, 'b/task.toml'), 'utf8')).toContain('name = "o/b"');
    expect(existsSync(join(out, 'tasks.jsonl'))).toBe(false);
  });
});

describe('what publishing refuses, each named, while the rest is written', () => {
  it('a Python verifier that declares response, even with a default', async () => {
    const { out, result } = await publish({
      ...Object.fromEntries(Object.entries(PY_TASK('def verify(workspace, response=None):\n    return 1.0\n')).map(([k, v]) => [`r/${k}`, v])),
      'ok/task.toml': TOML, 'ok/instruction.md': 'x\n', 'ok/tests/test.sh': '#!/bin/bash\n',
    });
    expect(result.written).toEqual(['ok']);
    expect(result.refused).toHaveLength(1);
    expect(result.refused[0]!.task_id).toBe('r');
    expect(result.refused[0]!.reason).toMatch(/r\/tests\/verifier\.py: verify\(response\): `verify` declares `response`.*Harbor has no response to give it\. Fix: grade from the workspace/);
    expect(existsSync(join(out, 'r'))).toBe(false);
  });

  it('a Python verifier in separate mode', async () => {
    const { result } = await publish(Object.fromEntries(Object.entries(PY_TASK('def verify(workspace):\n    return 1\n', `${TOML}environment_mode = "separate"\nartifacts = []\n`)).map(([k, v]) => [`s/${k}`, v])));
    expect(result.refused.map((r) => r.task_id)).toEqual(['s']);
    expect(result.refused[0]!.reason).toContain('s/task.toml: verifier.environment_mode = "separate": a Python verifier in separate mode cannot be published');
  });

  it('two tasks sharing a [task].name, each naming the other', async () => {
    const named = (id: string) => ({ [`${id}/task.toml`]: `[task]\nname = "o/same"\n${TOML}`, [`${id}/instruction.md`]: 'x\n', [`${id}/tests/test.sh`]: '#!/bin/bash\n' });
    const { result } = await publish({ ...named('a'), ...named('b'), 'c/task.toml': TOML, 'c/instruction.md': 'x\n', 'c/tests/test.sh': '#!/bin/bash\n' });
    expect(result.written).toEqual(['c']);
    expect(result.refused.map((r) => r.task_id).sort()).toEqual(['a', 'b']);
    expect(result.refused.find((r) => r.task_id === 'a')!.reason).toContain('task.name = "o/same": tasks "b" have the same [task].name, and Harbor keys a task on its name');
  });

  it('a task the loader refused stays listed with its reason', async () => {
    const { result } = await publish({ 'bad/task.toml': TOML, 'bad/tests/test.sh': '#!/bin/bash\n', 'ok/task.toml': TOML, 'ok/instruction.md': 'x\n', 'ok/tests/test.sh': '#!/bin/bash\n' });
    expect(result.written).toEqual(['ok']);
    expect(result.refused.map((r) => r.task_id)).toEqual(['bad']);
  });
});
