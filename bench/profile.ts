// `npm run bench -- profile [--runs 5] [--many 32]` (`--kubernetes`: profile/kubernetes.ts): where one trivial episode's time and CPU go, and 32 at once.
// Per phase (plan, seed, agent, verify, teardown, and `workflow`: the time between activities), the wall time and the
// CPU-seconds of the worker, the Temporal server, the engine (dockerd, containerd), this client and the rest of the
// machine (short-lived processes: execs, runc, shims; kernel work); engine API calls, execs and activities per
// episode, and history events. The worker reaches the engine through a counting pass-through socket.
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../src/client/batch.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { callsByPhase, cpuByPhase, phaseWall, type CpuSample } from './profile/attribution.ts';
import { findGroups, sampleCpu } from './profile/cpu.ts';
import { startEngineProxy } from './profile/engine-proxy.ts';
import { episodeHistory, eventTime, type EpisodeHistory } from './profile/timeline.ts';
import { episodeParts, meanParts, type Part } from './profile/parts.ts';
import { batchWorkflowId } from '../src/client/episodes.ts';
import { median, startWorker, trivialDataset } from './common.ts';

const PHASES = ['plan', 'seed', 'seed+agent', 'agent', 'verify', 'teardown', 'workflow'];
const GROUPS = ['worker', 'temporal', 'engine', 'short-lived', 'client'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Measured { wallSec: number; samples: CpuSample[]; histories: EpisodeHistory[]; calls: Array<{ at: number; kind: string }>; parts: Part[][] }

function table(title: string, m: Measured, episodes: number): { cpuPerEpisode: number; byGroup: Record<string, number> } {
  const timelines = m.histories.map((h) => h.timeline);
  const cpu = cpuByPhase(m.samples, timelines);
  const wall = phaseWall(timelines);
  const calls = callsByPhase(m.calls, timelines);
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(`\n${title}: wall ${m.wallSec.toFixed(2)} s`);
  console.log(`  ${pad('phase', 12)}${pad('wall s', 9)}${GROUPS.map((g) => pad(g, 12)).join('')}${pad('cpu-s', 8)}engine calls (execs)`);
  const byGroup: Record<string, number> = {};
  for (const phase of [...PHASES, 'idle']) {
    const row = cpu[phase] ?? {};
    const per = (g: string) => (row[g] ?? 0) / episodes;
    for (const g of GROUPS) byGroup[g] = (byGroup[g] ?? 0) + per(g);
    const total = GROUPS.reduce((s, g) => s + per(g), 0);
    const c = calls[phase] ?? {};
    const nCalls = Object.values(c).reduce((s, n) => s + n, 0) / episodes;
    const nExecs = Object.entries(c).filter(([k]) => /\/exec$/.test(k)).reduce((s, [, n]) => s + n, 0) / episodes;
    if ((phase === 'idle' || !(phase in wall)) && total < 0.005) continue; // teardown is often no activity: removal runs in the background
    console.log(`  ${pad(phase, 12)}${pad(phase === 'idle' ? '-' : (wall[phase] ?? 0).toFixed(3), 9)}${GROUPS.map((g) => pad(per(g).toFixed(3), 12)).join('')}${pad(total.toFixed(3), 8)}${nCalls.toFixed(1)} (${nExecs.toFixed(1)})`);
  }
  const kinds: Record<string, number> = {};
  for (const c of m.calls) kinds[c.kind] = (kinds[c.kind] ?? 0) + 1;
  const top = Object.entries(kinds).sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, n]) => `${k} ${(n / episodes).toFixed(1)}`);
  console.log(`  engine calls per episode: ${(m.calls.length / episodes).toFixed(1)}: ${top.join(', ')}`);
  const acts: Record<string, number> = {};
  for (const h of m.histories) for (const [k, n] of Object.entries(h.activities)) acts[k] = (acts[k] ?? 0) + n;
  const nActs = Object.values(acts).reduce((s, n) => s + n, 0) / m.histories.length;
  console.log(`  activities per episode: ${nActs.toFixed(1)} (${Object.entries(acts).map(([k, n]) => `${k} ${(n / m.histories.length).toFixed(1)}`).join(', ')}); history events ${median(m.histories.map((h) => h.events))}`);
  const cpuPerEpisode = Object.values(byGroup).reduce((s, n) => s + n, 0);
  console.log(`  CPU-s per episode: ${cpuPerEpisode.toFixed(3)} (${GROUPS.map((g) => `${g} ${byGroup[g]!.toFixed(3)}`).join(', ')})`);
  return { cpuPerEpisode, byGroup };
}

export default async function bench(args: string[]): Promise<void> {
  if (args.includes('--kubernetes')) return (await import('./profile/kubernetes.ts')).default(args);
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const runs = opt('runs', 5);
  const many = opt('many', 32);
  await ensureServer();
  const queue = `bench-profile-${process.pid}`;
  const proxy = await startEngineProxy('/var/run/docker.sock', join(tmpdir(), `berth-profile-${process.pid}.sock`));
  const worker = startWorker(queue, { slots: Math.max(many, 8), env: { DOCKER_HOST: `unix://${proxy.socket}` } });
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-profile-results-'));
  const groups = findGroups(worker.child.pid!);

  /** Runs batches while sampling CPU every 50 ms; keeps only the engine calls made meanwhile. */
  const measure = async (datasets: Array<{ dir: string; concurrency: number }>): Promise<Measured> => {
    const samples: CpuSample[] = [sampleCpu(groups)];
    const timer = setInterval(() => samples.push(sampleCpu(groups)), 50);
    const firstCall = proxy.calls.length;
    const t = Date.now();
    const histories: EpisodeHistory[] = [];
    const parts: Part[][] = [];
    try {
      for (const { dir, concurrency } of datasets) {
        const called = Date.now();
        const handle = await startBatch({ dataset: dir, concurrency, resultsDir, taskQueue: queue, client });
        const s = await handle.wait();
        const answered = Date.now();
        const bad = s.rows.find((r) => r.reward !== 1);
        if (bad) throw new Error(`an episode did not score 1: ${JSON.stringify(bad)}`);
        for (const r of s.rows) histories.push(await episodeHistory(client, r.workflow_id, r.run_id));
        if (s.rows.length === 1) {
          const batchStarted = eventTime((await client.workflow.getHandle(batchWorkflowId(handle.batchId)).fetchHistory()).events?.[0]);
          parts.push(episodeParts({ called, batchStarted, answered, episode: histories.at(-1)!.timeline }));
        }
      }
    } finally {
      clearInterval(timer);
    }
    await sleep(100);
    samples.push(sampleCpu(groups));
    return { wallSec: (Date.now() - t) / 1000 / datasets.length, samples, histories, calls: proxy.calls.slice(firstCall), parts };
  };

  try {
    await measure([{ dir: trivialDataset(1), concurrency: 1 }]); // warm the worker (bundle, connections)
    await sleep(2000);
    const one = trivialDataset(1);
    const singleRun = await measure(Array.from({ length: runs }, () => ({ dir: one, concurrency: 1 })));
    const single = table(`one trivial episode (mean of ${runs} runs)`, singleRun, runs);
    console.log(`  from the client's startBatch to its wait() answering, ms (mean): ${meanParts(singleRun.parts).map((p) => `${p.part} ${p.ms.toFixed(0)}`).join(', ')}`);
    await sleep(2000);
    const manyRun = await measure([{ dir: trivialDataset(many), concurrency: many }]);
    const crowd = table(`${many} episodes at once`, manyRun, many);
    console.log(`\nprofile: one episode ${single.cpuPerEpisode.toFixed(2)} CPU-s; at ${many} at once ${crowd.cpuPerEpisode.toFixed(2)} CPU-s per episode ` +
      `(worker ${crowd.byGroup.worker!.toFixed(2)}, temporal ${crowd.byGroup.temporal!.toFixed(2)}, engine ${crowd.byGroup.engine!.toFixed(2)}, short-lived ${crowd.byGroup['short-lived']!.toFixed(2)}), ` +
      `${manyRun.wallSec.toFixed(1)} s wall`);
  } finally {
    worker.child.kill('SIGTERM');
    await connection.close();
    await proxy.close();
  }
}
