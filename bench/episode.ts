// `npm run bench -- episode [--episodes 200] [--pairs 9]`: Berth's episodes against the raw floor of
// the same container steps done directly with dockerode, measured in the same run.
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pack } from 'tar-stream';
import { startBatch } from '../src/client/batch.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { median, solveScript, startWorker, trivialDataset } from './common.ts';

const docker = new Docker();

async function rawExec(c: Docker.Container, cmd: string): Promise<void> {
  const ex = await c.exec({ Cmd: ['bash', '-c', cmd], AttachStdout: true, AttachStderr: true });
  const stream = await ex.start({});
  stream.resume();
  await new Promise((r) => stream.on('end', r));
}

function tarOf(name: string, text: string): NodeJS.ReadableStream {
  const p = pack();
  p.entry({ name, mode: 0o755 }, text);
  p.finalize();
  return p as unknown as NodeJS.ReadableStream;
}

/** The floor: the same container steps an oracle episode needs, straight through dockerode (`agentSec` as in solveScript). */
export async function rawEpisode(i: number, agentSec = 0): Promise<number> {
  const t = Date.now();
  const c = await docker.createContainer({ name: `bench-raw-${process.pid}-${i}-${Date.now()}`, Image: 'berth-base:bookworm', Entrypoint: ['sleep'], Cmd: ['infinity'], WorkingDir: '/app', HostConfig: { Init: true } });
  await c.start();
  await rawExec(c, 'mkdir -p /app /logs/agent /logs/verifier /logs/artifacts /solution /tests');
  await c.putArchive(tarOf('solve.sh', solveScript(agentSec)), { path: '/solution' });
  await rawExec(c, 'cd /app && bash /solution/solve.sh > /logs/agent/oracle.txt 2>&1');
  await c.putArchive(tarOf('test.sh', 'grep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt\n'), { path: '/tests' });
  await rawExec(c, 'cd /app && bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1');
  (await c.getArchive({ path: '/logs/verifier' })).resume();
  await c.remove({ force: true, v: true });
  return (Date.now() - t) / 1000;
}

export async function rawMany(n: number, concurrency: number, agentSec = 0): Promise<number> {
  const t = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next < n) await rawEpisode(next++, agentSec); }));
  return (Date.now() - t) / 1000;
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const episodes = opt('episodes', 200);
  const pairs = opt('pairs', 9);
  await ensureServer();
  const queue = `bench-${process.pid}`;
  const worker = startWorker(queue);
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-results-'));
  const berthRun = async (dataset: string, concurrency: number) => {
    const t = Date.now();
    const s = await (await startBatch({ dataset, concurrency, resultsDir, taskQueue: queue, client })).wait();
    if (s.rows.some((r) => r.reward !== 1)) throw new Error(`an episode did not score 1: ${JSON.stringify(s.rows.find((r) => r.reward !== 1))}`);
    return { sec: (Date.now() - t) / 1000, rows: s.rows };
  };
  try {
    await berthRun(trivialDataset(1), 1); // warm the worker (bundle, connections)
    const one = trivialDataset(1);
    const berth: number[] = [];
    const raw: number[] = [];
    const phases: Record<string, number[]> = {};
    for (let i = 0; i < pairs; i++) {
      raw.push(await rawEpisode(i));
      const run = await berthRun(one, 1);
      berth.push(run.sec);
      for (const [k, v] of Object.entries(run.rows[0]?.timings ?? {})) (phases[k] ??= []).push(v);
    }
    console.log(`(1) one episode: berth median ${median(berth).toFixed(2)} s, raw ${median(raw).toFixed(2)} s`);
    console.log(`    berth phases (medians): ${Object.entries(phases).map(([k, v]) => `${k} ${median(v).toFixed(2)} s`).join(', ')}`);

    // Two alternating halves each, so a machine that drifts during the run weighs on both sides alike.
    const half = Math.ceil(episodes / 2);
    const many = trivialDataset(half);
    let rawSec = 0;
    let berthSec = 0;
    for (let round = 0; round < 2; round++) {
      rawSec += await rawMany(half, 8);
      berthSec += (await berthRun(many, 8)).sec;
    }
    const rawRate = ((2 * half) / rawSec) * 60;
    const berthRate = ((2 * half) / berthSec) * 60;
    console.log(`(2) ${2 * half} episodes at concurrency 8 (two alternating halves): berth ${berthRate.toFixed(1)}/min, raw ${rawRate.toFixed(1)}/min (ratio ${(berthRate / rawRate).toFixed(2)} of the floor's throughput)`);

    const single = (await berthRun(trivialDataset(1), 1)).rows[0]!;
    const triple = (await berthRun(trivialDataset(1, 3), 1)).rows[0]!;
    const events = async (id: string) => (await client.workflow.getHandle(id).describe()).historyLength;
    const e1 = await events(single.workflow_id);
    const e3 = await events(triple.workflow_id);
    console.log(`(3) history events: single-step episode ${e1}, three-step ${e3}, ${((e3 - e1) / 2).toFixed(1)} per extra turn`);

    await berthRun(trivialDataset(32), 32);
    console.log(`(4) worker peak RSS with 32 concurrent episodes: ${worker.peakRssMb().toFixed(0)} MB`);
    console.log(`episode: ${median(berth).toFixed(2)} s per episode (ratio ${(median(berth) / median(raw)).toFixed(2)} to the raw floor)`);
  } finally {
    worker.child.kill('SIGTERM');
    await connection.close();
  }
}
