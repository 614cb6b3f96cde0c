// `npm run bench -- loader`: discovery + load + digest of 10,000 generated task folders, against the raw
// floor of reading the same files with plain fs calls, measured in the same run.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, type Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDatasetSync } from '../src/task/index.ts';

const SINGLE: Record<string, string> = {
  'task.toml': 'schema_version = "1.3"\n[agent]\ntimeout_sec = 600\n[verifier]\ntimeout_sec = 120\n[environment]\ncpus = 1\nmemory_mb = 2048\n[environment.env]\nA = "1"\n',
  'instruction.md': '<!-- canary GUID 0000 -->\nCreate /app/hello.txt containing "hello".\n',
  'environment/Dockerfile': 'FROM ubuntu:24.04\nRUN apt-get update \\\n    && apt-get install -y python3\nWORKDIR /app\nENV PYTHONUNBUFFERED=1\n',
  'tests/test.sh': '#!/bin/bash\ntest -f /app/hello.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
  'tests/test_state.py': 'def test_hello():\n    assert open("/app/hello.txt").read().strip() == "hello"\n',
  'solution/solve.sh': '#!/bin/bash\necho hello > /app/hello.txt\n',
};

const MULTI: Record<string, string> = {
  'task.toml':
    'schema_version = "1.3"\nmulti_step_reward_strategy = "mean"\n[environment]\nworkdir = "/app"\n' +
    '[[steps]]\nname = "one"\nmin_reward = 1.0\n[steps.agent]\ntimeout_sec = 60\n[steps.verifier]\ntimeout_sec = 30\n' +
    '[[steps]]\nname = "two"\n[steps.agent]\ntimeout_sec = 60\n',
  'environment/Dockerfile': 'FROM ubuntu:24.04\nWORKDIR /app\n',
  'tests/helpers.sh': 'check() { test -f "$1"; }\n',
  'steps/one/instruction.md': 'Create a.txt.\n',
  'steps/one/tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
  'steps/one/solution/solve.sh': 'touch a.txt\n',
  'steps/two/instruction.md': 'Create b.txt.\n',
  'steps/two/tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
  'steps/two/solution/solve.sh': 'touch b.txt\n',
};

export function generate(root: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const files = i % 4 === 3 ? MULTI : SINGLE;
    // Two levels of grouping, so discovery searches like it does in real datasets.
    const dir = join(root, `group-${i % 10}`, `task-${String(i).padStart(5, '0')}`);
    for (const [rel, content] of Object.entries(files)) {
      const abs = join(dir, rel);
      mkdirSync(join(abs, '..'), { recursive: true });
      writeFileSync(abs, content.replace('hello', `hello-${i}`));
    }
  }
}

/** The floor: walk every folder and read every file, with nothing else. */
export function rawFloor(root: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }) as Dirent[]) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        bytes += readFileSync(p).length;
        files++;
      }
    }
  };
  walk(root);
  return { files, bytes };
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const start = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

export default async function bench(args: string[]): Promise<void> {
  const countArg = args.find((a) => /^\d+$/.test(a));
  const count = countArg ? Number(countArg) : 10_000;
  const root = mkdtempSync(join(tmpdir(), 'berth-bench-loader-'));
  try {
    const gen = time(() => generate(root, count));
    process.stdout.write(`generated ${count} task folders in ${(gen.ms / 1000).toFixed(1)} s under ${root}\n`);
    // Warm the page cache and the JIT for both sides, then measure each a few times and keep the best.
    rawFloor(root);
    loadDatasetSync(root, { logger: { warn: () => {} } });
    let floorMs = Infinity;
    let loadMs = Infinity;
    let loaded = 0;
    let files = 0;
    for (let round = 0; round < 5; round++) {
      const f = time(() => rawFloor(root));
      floorMs = Math.min(floorMs, f.ms);
      files = f.value.files;
      const l = time(() => loadDatasetSync(root, { logger: { warn: () => {} } }));
      loadMs = Math.min(loadMs, l.ms);
      loaded = l.value.tasks.length;
      if (l.value.refused.length > 0) throw new Error(`bench tasks were refused: ${l.value.refused[0]!.message}`);
    }
    const rate = loaded / (loadMs / 1000);
    process.stdout.write(`raw floor: ${files} files in ${floorMs.toFixed(0)} ms (${(count / (floorMs / 1000)).toFixed(0)} tasks/s)\n`);
    process.stdout.write(`discovery + load + digest: ${loaded} tasks in ${loadMs.toFixed(0)} ms\n`);
    process.stdout.write(`loader: ${rate.toFixed(0)} tasks/s (ratio ${(loadMs / floorMs).toFixed(2)} to the raw floor)\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
