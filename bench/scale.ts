// `npm run bench -- scale [--episodes 2000] [--concurrency 200,2000] [--server dev|cluster|both] [--workers 1]`:
// Berth's orchestration alone at scale. Every episode runs the whole workflow (pick a host, prepare, seed, the oracle's
// turn, the verifier, the row) on the null sandbox (bench/null-sandbox.ts: no container work), so what is measured is
// Temporal's and the worker's share: per episode, the Temporal server's CPU (the dev server's `temporal` process; on
// the cluster, frontend, history, matching, the internal worker and PostgreSQL with its backends), the workers' CPU
// and the history events; and episodes per second at each concurrency. The cluster is the one
// `npm run setup -- temporal-cluster` starts (frontend 127.0.0.1:7333); the dev server is ensured as the tests do.
// What it waits on in the background (other work on the machine) is measured for 10 s first and printed beside.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { startBatch } from '../src/client/batch.ts';
import { batchWorkflowId } from '../src/client/episodes.ts';
import { homePath } from '../src/config/paths.ts';
import { ensureServer, serverPid } from '../src/server/devserver.ts';
import { prepareCluster } from '../src/server/search-attributes.ts';
import { trivialDataset } from './common.ts';
import { inFlight, machineTicks, processTicks, runFigures, type RunFigures } from './scale-figures.ts';

type ServerKind = 'dev' | 'cluster';
const ADDRESS: Record<ServerKind, string> = { dev: '127.0.0.1:7233', cluster: '127.0.0.1:7333' };
const CLUSTER_SERVICES = ['frontend', 'history', 'matching', 'worker'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HZ = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

const readStat = (pid: number): string | null => { try { return readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return null; } };
const pidIn = (file: string): number | undefined => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || undefined : undefined);

/** The dev server's process: the one Berth started (BERTH_HOME/temporal.pid), else a `temporal server start-dev`. */
function devServerPids(): number[] {
  const own = serverPid();
  if (own) return [own];
  for (const d of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ').includes('server start-dev')) return [Number(d)];
    } catch { /* gone */ }
  }
  throw new Error('no Temporal dev server process found (BERTH_HOME/temporal.pid, or a `temporal server start-dev`)');
}

/** The cluster's four services and PostgreSQL's postmaster, from scripts/setup-temporal-cluster.sh's pid files. */
function clusterPids(): { services: number[]; postmaster: number } {
  const run = homePath('temporal-cluster', 'run');
  const services = CLUSTER_SERVICES.map((s) => pidIn(join(run, `${s}.pid`)));
  const postmaster = pidIn(join(run, 'postgres.pid'));
  if (services.some((p) => p === undefined || readStat(p) === null) || !postmaster) {
    throw new Error(`the Temporal cluster is not running (pid files under ${run}): start it with \`npm run setup -- temporal-cluster\` (docs/deployment.md)`);
  }
  return { services: services as number[], postmaster };
}

const childrenOf = (ppid: number): number[] => readdirSync('/proc').filter((x) => /^\d+$/.test(x)).map(Number).filter((pid) => {
  const s = readStat(pid);
  return s !== null && Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) === ppid;
});

/** The Temporal server's CPU ticks now: its processes' own and their reaped children's (PostgreSQL's backends live and gone). */
function temporalTicks(kind: ServerKind): number {
  const pids = kind === 'dev' ? devServerPids() : (() => { const c = clusterPids(); return [...c.services, c.postmaster, ...childrenOf(c.postmaster)]; })();
  return pids.reduce((sum, pid) => { const s = readStat(pid); return sum + (s ? processTicks(s, true) : 0); }, 0);
}

const workerTicks = (workers: ChildProcess[]): number => workers.reduce((sum, w) => { const s = readStat(w.pid!); return sum + (s ? processTicks(s) : 0); }, 0);
const machineNow = () => machineTicks(readFileSync('/proc/stat', 'utf8'));

/** Runs `fn` over `items`, `width` at a time. */
async function pooled<T, R>(items: T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) { const i = next++; out[i] = await fn(items[i]!); }
  }));
  return out;
}

/** Worker lines that say nothing about the run: the host queue's worker has no workflows; the trivial task's budget note, once per episode. */
const QUIET = /No workflows registered|^\s|^\}|the episode budget follows the task's worst case/;

/** Null workers, each its own "host" (engine id), each printing its lines with its name. */
async function startNullWorkers(kind: ServerKind, queue: string, count: number, slots: number): Promise<ChildProcess[]> {
  const workers = Array.from({ length: count }, (_, i) => {
    const child = spawn(process.execPath, ['--max-semi-space-size=4', '--import', 'tsx', join(import.meta.dirname, 'null-worker.ts'), ADDRESS[kind], queue, `null-${kind}-${i}`], {
      env: { ...process.env, BERTH_WORKER_SLOTS: String(slots), BERTH_DETACHED_WORKER: '1', BERTH_JANITOR_AT_START: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ready = new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`null worker ${i} exited (${code}) before it was ready`)));
      child.stdout!.on('data', (d: Buffer) => {
        for (const line of d.toString().split('\n').filter(Boolean)) {
          if (!QUIET.test(line)) console.log(`  [worker ${i}] ${line}`);
          if (line.includes('shared queue')) resolve();
        }
      });
    });
    child.stderr!.on('data', (d: Buffer) => { for (const line of d.toString().split('\n').filter(Boolean)) if (!QUIET.test(line)) console.log(`  [worker ${i}] ${line}`); });
    return { child, ready };
  });
  const stop = () => { for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGTERM'); };
  process.once('exit', stop);
  await Promise.all(workers.map((w) => w.ready));
  return workers.map((w) => w.child);
}

async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  await Promise.all(workers.map((w) => new Promise<void>((resolve) => {
    if (w.exitCode !== null) { resolve(); return; }
    w.once('exit', () => resolve());
    w.kill('SIGTERM');
  })));
}

interface RunResult { concurrency: number; failed: number; figures: RunFigures; flight: { mean: number; peak: number }; peakRssMb: number[]; background: { temporalCores: number; busyCores: number } }

/** A worker's peak resident memory so far (VmHWM), in MB. */
const peakRssMb = (w: ChildProcess): number => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${w.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** One batch of `episodes` at `concurrency`, with the CPU each side spent over it and each episode's history length. */
async function measuredBatch(kind: ServerKind, client: Client, queue: string, workers: ChildProcess[], episodes: number, concurrency: number, resultsDir: string): Promise<Omit<RunResult, 'background'>> {
  const dataset = trivialDataset(1);
  const t0 = { temporal: temporalTicks(kind), worker: workerTicks(workers), client: process.cpuUsage(), machine: machineNow(), at: Date.now() };
  const handle = await startBatch({ dataset, repeats: episodes, concurrency, resultsDir, taskQueue: `${queue}-null`, client });
  const summary = await handle.wait();
  const wallMs = Date.now() - t0.at;
  const t1 = { temporal: temporalTicks(kind), worker: workerTicks(workers), client: process.cpuUsage(t0.client), machine: machineNow() };
  const failed = summary.rows.filter((r) => r.reward !== 1).length;
  const described = await pooled(summary.rows, 32, (r) => client.workflow.getHandle(r.workflow_id, r.run_id ?? undefined).describe());
  const episodeEvents = described.map((d) => d.historyLength);
  const flight = inFlight(described.map((d) => [d.startTime.getTime(), (d.closeTime ?? d.startTime).getTime()] as const));
  // The batch workflow continues as new every 500 starts: its runs' events together.
  let batchEvents = 0;
  // (described one by one: a listing's historyLength is not filled in for every run by every visibility store).
  for await (const run of client.workflow.list({ query: `WorkflowId = "${batchWorkflowId(summary.batchId)}"` })) {
    batchEvents += (await client.workflow.getHandle(run.workflowId, run.runId).describe()).historyLength;
  }
  const figures = runFigures({
    episodes: summary.rows.length, wallMs,
    temporalTicks: t1.temporal - t0.temporal, workerTicks: t1.worker - t0.worker, clientMs: (t1.client.user + t1.client.system) / 1000,
    machine: { busy: t1.machine.busy - t0.machine.busy, total: t1.machine.total - t0.machine.total },
    episodeEvents, batchEvents,
  }, HZ, cpus().length);
  return { concurrency, failed, figures, flight, peakRssMb: workers.map(peakRssMb) };
}

/** What the server and the machine spend with nothing of ours running (other developers' tests, the cluster's own upkeep). */
async function background(kind: ServerKind, ms: number): Promise<RunResult['background']> {
  const a = { t: temporalTicks(kind), m: machineNow() };
  await sleep(ms);
  const b = { t: temporalTicks(kind), m: machineNow() };
  return { temporalCores: ((b.t - a.t) * 1000) / HZ / ms, busyCores: ((b.m.busy - a.m.busy) / (b.m.total - a.m.total)) * cpus().length };
}

function report(kind: ServerKind, workers: number, episodes: number, r: RunResult): void {
  const f = r.figures;
  const bgMs = (r.background.temporalCores * 1000) / f.episodesPerSec;
  console.log(`${kind} server, ${episodes} episodes at concurrency ${r.concurrency}, ${workers} worker(s): ${f.episodesPerSec.toFixed(1)} episodes/s` +
    `${r.failed > 0 ? ` (${r.failed} not scored 1)` : ''}; in flight ${r.flight.mean.toFixed(1)} on average, ${r.flight.peak} at most\n` +
    `  per episode: Temporal CPU ${f.temporalMsPerEpisode.toFixed(1)} ms (of which the background's ${bgMs.toFixed(1)} ms), worker CPU ${f.workerMsPerEpisode.toFixed(1)} ms, ` +
    `client CPU ${f.clientMsPerEpisode.toFixed(1)} ms; history events ${f.events.mean.toFixed(1)} (min ${f.events.min}, median ${f.events.median}, max ${f.events.max}) ` +
    `+ ${f.batchEventsPerEpisode.toFixed(1)} of the batch workflow\n` +
    `  cores busy: Temporal ${f.temporalCores.toFixed(2)}, workers ${f.workerCores.toFixed(2)}, machine ${f.busyCores.toFixed(2)} of ${cpus().length} ` +
    `(before the run: Temporal ${r.background.temporalCores.toFixed(2)}, machine ${r.background.busyCores.toFixed(2)}); ` +
    `worker peak RSS ${r.peakRssMb.map((m) => `${m.toFixed(0)} MB`).join(', ')}`);
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: string) => { const i = args.indexOf(`--${name}`); return i >= 0 ? args[i + 1]! : d; };
  const episodes = Number(opt('episodes', '2000'));
  const concurrencies = opt('concurrency', '200,2000').split(',').map(Number);
  const server = opt('server', 'both');
  const workerCount = Number(opt('workers', '1'));
  if (!['dev', 'cluster', 'both'].includes(server)) throw new Error(`--server ${server}: choose dev, cluster or both`);
  const kinds: ServerKind[] = server === 'both' ? ['dev', 'cluster'] : [server as ServerKind];
  // Each worker holds enough slots for its share of the largest concurrency (a slot is a sandbox held, here a null one).
  const slots = Math.ceil(Math.max(...concurrencies) / workerCount) + 8;
  for (const kind of kinds) {
    // As `berth worker` does on a cluster: the namespace, its retention and Berth's search attributes (idempotent).
    if (kind === 'dev') await ensureServer();
    else await prepareCluster(ADDRESS.cluster);
    temporalTicks(kind); // fails now, with how to start it, when the server is not running
    const connection = await Connection.connect({ address: ADDRESS[kind] });
    const client = new Client({ connection });
    const queue = `bench-scale-${process.pid}-${kind}`;
    const workers = await startNullWorkers(kind, queue, workerCount, slots);
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-scale-results-'));
    try {
      // Warm: the workers' bundle and connections, the server's caches for the queues.
      await measuredBatch(kind, client, queue, workers, 8, 8, resultsDir);
      for (const concurrency of concurrencies) {
        const bg = await background(kind, 10_000);
        const r = await measuredBatch(kind, client, queue, workers, episodes, concurrency, resultsDir);
        report(kind, workerCount, episodes, { ...r, background: bg });
      }
    } finally {
      await stopWorkers(workers);
      await connection.close();
    }
  }
}
