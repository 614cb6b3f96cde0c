// `npm run bench -- compose [--pairs 7] [--many 48]`: a two-service trivial Compose task through Berth
// against the same steps done directly (the compose floor: `docker compose up --wait`, one `docker
// compose exec` each for the solution and test.sh, `down`), alternating in one run; then --many
// episodes at once (0 failures expected).
import { Client, Connection } from '@temporalio/client';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../src/client/batch.ts';
import { composeBinary } from '../src/sandbox/compose/cli.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { startWorker } from './common.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const IMAGE = 'berth-base:bookworm';
const SIDECAR = `  side:\n    image: ${IMAGE}\n    command: ["sh", "-c", "echo pong > /srv/answer; cd /srv && exec python3 -m http.server 8000"]\n`;
const SOLVE = 'python3 -c "import urllib.request; print(urllib.request.urlopen(\'http://side:8000/answer\').read().decode().strip())" > /app/out.txt';
const TEST = '[ "$(cat /app/out.txt)" = pong ] && echo 1 > /logs/verifier/reward.txt';

function dataset(count: number): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-bench-compose-'));
  for (let i = 0; i < count; i++) {
    const dir = join(root, `c${i}`);
    for (const d of ['solution', 'tests', 'environment']) mkdirSync(join(dir, d), { recursive: true });
    writeFileSync(join(dir, 'task.toml'), `[environment]\ndocker_image = "${IMAGE}"\nworkdir = "/app"\n`);
    writeFileSync(join(dir, 'instruction.md'), 'Ask the sidecar.\n');
    writeFileSync(join(dir, 'environment', 'docker-compose.yaml'), `services:\n${SIDECAR}`);
    writeFileSync(join(dir, 'solution', 'solve.sh'), `${SOLVE}\n`);
    writeFileSync(join(dir, 'tests', 'test.sh'), `${TEST}\n`);
  }
  return root;
}

/** The floor: Harbor's way of running the same episode with the Compose CLI alone. */
function floorEpisode(i: number): number {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-floor-'));
  const file = join(dir, 'compose.yaml');
  writeFileSync(file, `services:\n  main:\n    image: ${IMAGE}\n    command: ["sh", "-c", "sleep infinity"]\n    init: true\n${SIDECAR}`);
  const project = `bench-floor-${process.pid}-${i}`;
  const compose = (...args: string[]) => {
    const r = spawnSync(composeBinary(), ['--project-name', project, '-f', file, ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`docker compose ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  const t = Date.now();
  compose('up', '--detach', '--wait', '--quiet-pull');
  compose('exec', '-T', 'main', 'bash', '-c', `mkdir -p /app /logs/verifier && ${SOLVE}`);
  compose('exec', '-T', 'main', 'bash', '-c', TEST);
  if (compose('exec', '-T', 'main', 'cat', '/logs/verifier/reward.txt').trim() !== '1') throw new Error('the floor episode did not score 1');
  compose('down', '--volumes', '--timeout', '0');
  return (Date.now() - t) / 1000;
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const pairs = opt('pairs', 7);
  const many = opt('many', 48);
  await ensureServer();
  const queue = `bench-compose-${process.pid}`;
  const worker = startWorker(queue, { slots: Math.max(many, 8) }).child;
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-results-'));
  const berthRun = async (data: string, concurrency: number) => {
    const t = Date.now();
    const s = await (await startBatch({ dataset: data, concurrency, resultsDir, taskQueue: queue, client })).wait();
    return { sec: (Date.now() - t) / 1000, rows: s.rows };
  };
  try {
    await berthRun(dataset(1), 1); // warm the worker (bundle, connections)
    const one = dataset(1);
    const berth: number[] = [];
    const floor: number[] = [];
    const phases: Record<string, number[]> = {};
    for (let i = 0; i < pairs; i++) {
      floor.push(floorEpisode(i));
      const run = await berthRun(one, 1);
      if (run.rows[0]?.reward !== 1) throw new Error(`a Berth episode did not score 1: ${JSON.stringify(run.rows[0])}`);
      berth.push(run.sec);
      for (const [k, v] of Object.entries(run.rows[0]?.timings ?? {})) (phases[k] ??= []).push(v);
    }
    console.log(`(1) one episode: berth median ${median(berth).toFixed(2)} s, compose floor ${median(floor).toFixed(2)} s`);
    console.log(`    berth phases (medians): ${Object.entries(phases).map(([k, v]) => `${k} ${median(v).toFixed(2)} s`).join(', ')}`);
    if (many > 0) {
      const run = await berthRun(dataset(many), many);
      const failed = run.rows.filter((r) => r.reward !== 1);
      console.log(`(2) ${many} concurrent Compose episodes: ${run.rows.length - failed.length} scored 1, ${failed.length} failures, ${run.sec.toFixed(0)} s wall`);
      for (const f of failed.slice(0, 3)) console.log(`    ${f.task_id}: ${f.failure_kind} ${f.failure_reason}`);
    }
    console.log(`compose: ${median(berth).toFixed(2)} s per episode (ratio ${(median(berth) / median(floor)).toFixed(2)} to the compose floor)`);
  } finally {
    worker.kill('SIGTERM');
    await connection.close();
  }
}
