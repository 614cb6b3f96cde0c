// `npm run bench -- vs-harbor [--tasks 40] [--concurrency 8]`: Berth and Harbor 0.25 side by side on the same
// trivial tasks, the same engine and the same concurrency (issue 25: the goal is ten times Harbor's speed). Harbor is
// the real one from the setup's venv (`harbor run -a oracle`); both must score every task 1 for the figures to count.
// Order: Berth with the warm pool off, Harbor, Berth with the pool on; busy CPU-seconds for each.
import { Client, Connection } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startBatch } from '../src/client/batch.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { harborEnv, harborVenv } from '../test/helpers/harbor.ts';
import { startWorker } from './common.ts';
import { machineBusy } from './profile/cpu.ts';

const run = promisify(execFile);

/** Tasks both tools run as they are: no workdir (Harbor's Docker environment makes none in a prebuilt image). */
function sharedDataset(count: number): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-vs-harbor-'));
  for (let i = 0; i < count; i++) {
    const dir = join(root, `t${i}`);
    mkdirSync(join(dir, 'solution'), { recursive: true });
    mkdirSync(join(dir, 'tests'), { recursive: true });
    writeFileSync(join(dir, 'task.toml'), '[environment]\ndocker_image = "berth-base:bookworm"\n');
    writeFileSync(join(dir, 'instruction.md'), 'Write ok to /tmp/out.txt\n');
    writeFileSync(join(dir, 'solution', 'solve.sh'), '#!/bin/bash\necho ok > /tmp/out.txt\n');
    writeFileSync(join(dir, 'tests', 'test.sh'), '#!/bin/bash\nif grep -q ok /tmp/out.txt; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n');
  }
  return root;
}

/** Each trial's reward as Harbor wrote it (`<trial>/result.json`, verifier_result.rewards.reward). */
function harborRewards(jobDir: string): number[] {
  return readdirSync(jobDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(jobDir, d.name, 'result.json')))
    .map((d) => {
      const r = JSON.parse(readFileSync(join(jobDir, d.name, 'result.json'), 'utf8')) as { verifier_result?: { rewards?: { reward?: number } } };
      return r.verifier_result?.rewards?.reward ?? Number.NaN;
    });
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const tasks = opt('tasks', 40);
  const concurrency = opt('concurrency', 8);
  const harbor = join(harborVenv(), 'bin', 'harbor');
  if (!existsSync(harbor)) throw new Error(`${harbor} is missing: run \`npm run setup\` (it installs harbor 0.25.0)`);
  const dataset = sharedDataset(tasks);
  await ensureServer();
  const queue = `bench-harbor-${process.pid}`;
  const worker = startWorker(queue);
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-results-'));
  const measured = async (fn: () => Promise<void>) => {
    const busy = machineBusy();
    const t = Date.now();
    await fn();
    return { sec: (Date.now() - t) / 1000, cpu: machineBusy() - busy };
  };
  const berthRun = (warmPool: boolean) => measured(async () => {
    const s = await (await startBatch({ dataset, concurrency, resultsDir, taskQueue: queue, client, warmPool })).wait();
    const bad = s.rows.filter((r) => r.reward !== 1);
    if (s.rows.length !== tasks || bad.length > 0) throw new Error(`Berth: ${s.rows.length} rows, ${bad.length} not 1: ${JSON.stringify(bad[0])}`);
  });
  try {
    // A first small batch: the worker's bundle and the image's first use are not the comparison.
    await (await startBatch({ dataset: sharedDataset(1), concurrency: 1, resultsDir, taskQueue: queue, client })).wait();
    const off = await berthRun(false);
    const jobs = mkdtempSync(join(tmpdir(), 'harbor-jobs-'));
    const h = await measured(async () => {
      await run(harbor, ['run', '-p', dataset, '-a', 'oracle', '-n', String(concurrency), '-o', jobs, '--job-name', 'bench', '-q'],
        { env: harborEnv(), timeout: 1_800_000, maxBuffer: 64 * 1024 * 1024 });
    });
    const jobDir = join(jobs, 'bench');
    const rewards = harborRewards(jobDir);
    if (rewards.length !== tasks || rewards.some((r) => r !== 1)) throw new Error(`Harbor: ${rewards.length} trials, rewards ${JSON.stringify(rewards)} (${jobDir})`);
    const on = await berthRun(true);
    const line = (what: string, m: { sec: number; cpu: number }, ratio = true) =>
      console.log(`${what.padEnd(22)} ${m.sec.toFixed(1).padStart(7)} s  ${(m.cpu / tasks).toFixed(2).padStart(5)} CPU-s per episode${ratio ? `  ${(h.sec / m.sec).toFixed(1)} times Harbor's speed` : ''}`);
    console.log(`${tasks} trivial tasks (oracle), concurrency ${concurrency}, one engine; every episode scored 1 on both sides`);
    line('Harbor 0.25', h, false);
    line('Berth, warm pool off', off);
    line('Berth, warm pool on', on);
  } finally {
    worker.child.kill('SIGTERM');
    await connection.close();
  }
}
