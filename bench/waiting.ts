// `npm run bench -- waiting [--sizes 16,64,128] [--sleep 60]`: how much N waiting episodes cost (agents that sleep,
// as agents waiting for a model do) against a floor of N containers started directly and left sleeping, measured
// in the same run: busy cores per waiting episode (from /proc/stat, in the middle of the wait), the worker's resident
// memory per episode beyond its base, the engine's, and Temporal history events per episode.
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSlots, slotsFile } from '../src/config/slots.ts';
import { startBatch } from '../src/client/batch.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { hostQueueName } from '../src/config/index.ts';
import { startWorker } from './common.ts';

const docker = new Docker();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Busy and total jiffies of all CPUs (/proc/stat's first line). */
function cpuTimes(): { busy: number; total: number } {
  const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f.map(Number) as number[];
  const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return { busy, total: busy + idle! + iowait! };
}

/** Busy cores over `ms` (0 to the number of cores). */
async function busyCores(ms: number): Promise<number> {
  const a = cpuTimes();
  await sleep(ms);
  const b = cpuTimes();
  return ((b.busy - a.busy) / (b.total - a.total)) * cpus().length;
}

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const dockerdPid = (): number => Number(readFileSync('/var/run/docker.pid', 'utf8').trim());

function sleepingDataset(count: number, sleepSec: number): string {
  const root = mkdtempSync(join(tmpdir(), 'berth-bench-waiting-'));
  for (let i = 0; i < count; i++) {
    const dir = join(root, `s${i}`);
    mkdirSync(join(dir, 'solution'), { recursive: true });
    mkdirSync(join(dir, 'tests'), { recursive: true });
    writeFileSync(join(dir, 'task.toml'), '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 900\n');
    writeFileSync(join(dir, 'instruction.md'), 'Wait.\n');
    writeFileSync(join(dir, 'solution', 'solve.sh'), `sleep ${sleepSec}\necho ok > out.txt\n`);
    writeFileSync(join(dir, 'tests', 'test.sh'), 'grep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt\n');
  }
  return root;
}

/** The floor: N containers as Berth makes them (init, a keep-alive), started directly and left sleeping. */
async function floor(n: number, windowMs: number): Promise<{ cores: number; engineMb: number }> {
  const made: Docker.Container[] = [];
  try {
    for (let i = 0; i < n; i += 8) {
      made.push(...await Promise.all(Array.from({ length: Math.min(8, n - i) }, async (_, j) => {
        const c = await docker.createContainer({
          name: `bench-waiting-floor-${process.pid}-${i + j}`, Image: 'berth-base:bookworm', Entrypoint: ['sleep'], Cmd: ['infinity'],
          HostConfig: { Init: true, NetworkMode: 'none' }, Labels: { 'berth.bench': 'waiting' },
        });
        await c.start();
        return c;
      })));
    }
    await sleep(5000);
    const cores = await busyCores(windowMs);
    return { cores, engineMb: rssMb(dockerdPid()) };
  } finally {
    await Promise.all(made.map((c) => c.remove({ force: true }).catch(() => undefined)));
  }
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: string) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1]! : d; };
  const sizes = opt('sizes', '16,64,128').split(',').map(Number);
  const sleepSec = Number(opt('sleep', '60'));
  const windowMs = 15_000;
  await ensureServer();
  const queue = `bench-waiting-${process.pid}`;
  const slots = Math.max(...sizes);
  const worker = startWorker(queue, { slots }).child;
  const hostQueue = `${hostQueueName(String((await docker.info()).ID))}-${queue}`;
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-waiting-results-'));
  const figures: Array<{ n: number; cores: number; floor: number; base: number; workerBase: number; workerMb: number; engineMb: number; floorEngineMb: number; events: number; waiting: number; failed: number }> = [];
  try {
    // Warm the worker (bundle, connections), then its base memory.
    await (await startBatch({ dataset: sleepingDataset(1, 0), resultsDir, taskQueue: queue, client })).wait();
    await sleep(3000);
    for (const n of sizes) {
      const base = await busyCores(windowMs);
      const workerBase = rssMb(worker.pid!);
      const f = await floor(n, windowMs);
      const handle = await startBatch({ dataset: sleepingDataset(n, sleepSec), concurrency: n, resultsDir, taskQueue: queue, client });
      // Every episode's sandbox seeded and its agent started (a few seconds after its seed), then the middle of the wait.
      const seeded = () => readSlots(slotsFile(hostQueue)).leases.filter((l) => l.seeded !== undefined && l.leaving === undefined);
      const deadline = Date.now() + 600_000;
      while (seeded().length < n && Date.now() < deadline) await sleep(500);
      const firstSeed = Math.min(...seeded().map((l) => l.seeded!));
      await sleep(5000);
      const room = firstSeed + sleepSec * 1000 - Date.now() - 2000;
      if (room < 5000) console.log(`  (${n}: the last seed came ${((Date.now() - firstSeed) / 1000).toFixed(0)} s after the first; the sample window is short: use --sleep ${sleepSec * 2})`);
      const waiting = seeded().length;
      const cores = await busyCores(Math.max(2000, Math.min(windowMs, room)));
      const workerMb = rssMb(worker.pid!);
      const engineMb = rssMb(dockerdPid());
      const summary = await handle.wait();
      const failed = summary.rows.filter((r) => r.reward !== 1).length;
      const lengths = await Promise.all(summary.rows.map(async (r) => (await client.workflow.getHandle(r.workflow_id, r.run_id).describe()).historyLength));
      const events = lengths.reduce((a, b) => a + b, 0) / lengths.length;
      figures.push({ n, cores, floor: f.cores, base, workerBase, workerMb, engineMb, floorEngineMb: f.engineMb, events, waiting, failed });
      const perEp = (x: number) => ((x - base) / n).toFixed(4);
      console.log(`${n} waiting episodes (${waiting} seen waiting, ${failed} not scored 1): busy cores ${cores.toFixed(3)} (idle machine ${base.toFixed(3)}, floor ${f.cores.toFixed(3)}): ` +
        `${perEp(cores)} per episode, floor ${perEp(f.cores)}; worker RSS ${workerMb.toFixed(0)} MB (base ${workerBase.toFixed(0)} MB, ${((workerMb - workerBase) / n).toFixed(2)} MB per episode); ` +
        `dockerd RSS ${engineMb.toFixed(0)} MB (floor ${f.engineMb.toFixed(0)} MB); ${events.toFixed(1)} history events per episode`);
      await sleep(5000);
    }
    const last = figures[figures.length - 1]!;
    const per = (x: number) => Math.max(0, (x - last.base) / last.n);
    console.log(`waiting: ${per(last.cores).toFixed(4)} busy cores per waiting episode at ${last.n} (floor ${per(last.floor).toFixed(4)}), ` +
      `worker ${last.workerBase.toFixed(0)} MB + ${((last.workerMb - last.workerBase) / last.n).toFixed(2)} MB per episode`);
  } finally {
    worker.kill('SIGTERM');
    await connection.close();
  }
}
