// `npm run bench -- profile --kubernetes [--runs 5] [--many 8]`: where a trivial episode's time goes on the local
// Kubernetes cluster. The worker runs with kube-tap.mjs loaded, which records every request it makes to the apiserver;
// per episode: API calls by kind (with their summed time), exec round trips and tar over exec, Lease writes, pod
// watches against pod reads (polls), and the wall time of each phase from the episodes' Temporal histories.
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { batchWorkflowId } from '../../src/client/episodes.ts';
import { ensureServer } from '../../src/server/devserver.ts';
import { startWorker, trivialDataset } from '../common.ts';
import { kubeBenchNamespace } from '../kube-setup.ts';
import { callsByPhase, phaseWall, type EpisodeTimeline } from './attribution.ts';
import { callsByKind, kubeCallKind, type KubeCall } from './kube-calls.ts';
import { episodeHistory, eventTime } from './timeline.ts';
import { ClusterCpu, cpuLine } from './kube-cpu.ts';
import { PodTimeline } from './pod-timeline.ts';
import { naiveEpisode, naiveMany } from '../kubernetes.ts';
import Docker from 'dockerode';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { loadavg } from 'node:os';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PHASES = ['plan', 'seed', 'seed+agent', 'agent', 'verify', 'teardown', 'workflow', 'idle'];

function readCalls(file: string): KubeCall[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as KubeCall);
  } catch {
    return [];
  }
}

function table(title: string, wallSec: number, calls: KubeCall[], timelines: EpisodeTimeline[], activities: Record<string, number>, queued: Record<string, number>): void {
  const n = timelines.length;
  const per = (x: number) => (x / n).toFixed(1);
  const kinds = callsByKind(calls);
  const count = (test: (kind: string) => boolean) => kinds.filter((k) => test(k.kind)).reduce((s, k) => s + k.n, 0);
  const time = (test: (kind: string) => boolean) => kinds.filter((k) => test(k.kind)).reduce((s, k) => s + k.ms, 0);
  const isExec = (k: string) => k.startsWith('EXEC ');
  const isTar = (k: string) => k.startsWith('EXEC tar-over-exec');
  const isLeaseWrite = (k: string) => /^(POST|PUT|PATCH|DELETE) leases/.test(k);
  console.log(`\n${title}: wall ${wallSec.toFixed(2)} s per batch, ${n} episodes`);
  console.log(`  API calls per episode ${per(calls.length)}; exec round trips ${per(count(isExec))} (mean ${(time(isExec) / Math.max(1, count(isExec))).toFixed(0)} ms), ` +
    `of them tar over exec ${per(count(isTar))}; Lease writes ${per(count(isLeaseWrite))}, Lease lists ${per(count((k) => k === 'GET leases'))}; ` +
    `pod watches ${per(count((k) => k.startsWith('WATCH pods')))} against pod reads (polls) ${per(count((k) => k === 'GET pods/{name}'))}`);
  console.log(`  ${'kind'.padEnd(56)}${'per ep.'.padEnd(9)}mean ms`);
  for (const k of kinds) console.log(`  ${k.kind.padEnd(56)}${per(k.n).padEnd(9)}${(k.ms / k.n).toFixed(0)}`);
  const wall = phaseWall(timelines);
  const byPhase = callsByPhase(calls.map((c) => ({ at: c.at, kind: kubeCallKind(c.method, c.path) })), timelines);
  console.log(`  ${'phase'.padEnd(12)}${'wall s'.padEnd(9)}${'calls'.padEnd(8)}${'execs'.padEnd(8)}top calls`);
  for (const phase of PHASES) {
    const c = byPhase[phase] ?? {};
    const total = Object.values(c).reduce((s, x) => s + x, 0);
    if (!(phase in wall) && total === 0) continue;
    const execs = Object.entries(c).filter(([k]) => isExec(k)).reduce((s, [, x]) => s + x, 0);
    const top = Object.entries(c).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([k, x]) => `${k} ${per(x)}`).join(', ');
    console.log(`  ${phase.padEnd(12)}${(phase === 'idle' ? '-' : (wall[phase] ?? 0).toFixed(3)).padEnd(9)}${per(total).padEnd(8)}${per(execs).padEnd(8)}${top}`);
  }
  console.log(`  queued (scheduled to started), s per episode: ${Object.entries(queued).map(([k, x]) => `${k} ${(x / 1000 / n).toFixed(3)}`).join(', ')}`);
  if (n > 1) {
    const first = Math.min(...timelines.map((t) => t.start));
    const at = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return [0, 0.5, 1].map((q) => ((s[Math.round(q * (s.length - 1))]! - first) / 1000).toFixed(2)).join('/'); };
    console.log(`  episodes' starts (first/median/last, s): ${at(timelines.map((t) => t.start))}; ends: ${at(timelines.map((t) => t.end))}; ` +
      `seeds closed: ${at(timelines.map((t) => t.activities.find((a) => a.phase === 'seed')?.end ?? t.end))}`);
    const phases = [...new Set(timelines.flatMap((t) => t.activities.map((a) => a.phase)))];
    console.log(`  activities scheduled -> closed (first/median/last, s): ${phases.map((p) => {
      const of = timelines.map((t) => t.activities.find((a) => a.phase === p)).filter((a) => a !== undefined);
      return `${p} ${at(of.map((a) => a.start))} -> ${at(of.map((a) => a.end))}`;
    }).join('; ')}`);
  }
  console.log(`  activities per episode: ${Object.entries(activities).map(([k, x]) => `${k} ${per(x)}`).join(', ')}`);
}

/** When the batch asked for its children and when the server had started each, s from the batch's first event. */
async function childStarts(client: Client, workflowId: string): Promise<string> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const first = eventTime(events[0]);
  const q = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? [0, 0.5, 1].map((f) => ((s[Math.round(f * (s.length - 1))]! - first) / 1000).toFixed(2)).join('/') : '-'; };
  const asked = events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).map(eventTime);
  const started = events.filter((e) => e.childWorkflowExecutionStartedEventAttributes).map(eventTime);
  const closed = events.filter((e) => e.childWorkflowExecutionCompletedEventAttributes).map(eventTime);
  return `children asked ${q(asked)}, started ${q(started)}, completed ${q(closed)} (first/median/last, s from the batch's start; ${events.length} events)`;
}

export default async function profileKubernetes(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const runs = opt('runs', 5);
  const many = opt('many', 8);
  /** `--naive`: the naive client-node loop at `many` at once too, before Berth's, with the same CPU and pod figures. */
  const naiveToo = args.includes('--naive');
  const bench = await kubeBenchNamespace();
  await ensureServer();
  const queue = `bench-kprofile-${process.pid}`;
  const callsFile = join(tmpdir(), `berth-profile-kube-calls-${process.pid}.jsonl`);
  rmSync(callsFile, { force: true });
  const tap = join(import.meta.dirname, 'kube-tap.mjs');
  const worker = startWorker(queue, { env: {
    BERTH_CONFIG: bench.config, BERTH_PROFILE_KUBE_CALLS: callsFile,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${tap}`.trim(),
  } });
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-kprofile-results-'));
  const pods = new PodTimeline();
  await pods.start(bench.kc, bench.ns);
  const load = () => loadavg().map((x) => x.toFixed(1)).join(' ');

  const measure = async (title: string, datasets: Array<{ dir: string; concurrency: number }>) => {
    const fromCall = readCalls(callsFile).length;
    let wallMs = 0;
    const timelines: EpisodeTimeline[] = [];
    const activities: Record<string, number> = {};
    const queued: Record<string, number> = {};
    const cpu = new ClusterCpu(worker.child.pid!);
    const from = Date.now();
    const loadBefore = load();
    for (const { dir, concurrency } of datasets) {
      const t = Date.now();
      const handle = await startBatch({ dataset: dir, concurrency, resultsDir, taskQueue: `${queue}-kubernetes`, client });
      const s = await handle.wait();
      wallMs += Date.now() - t;
      if (concurrency > 1) console.log(`  batch: ${await childStarts(client, batchWorkflowId(handle.batchId))}`);
      const bad = s.rows.find((r) => r.reward !== 1);
      if (bad) throw new Error(`an episode did not score 1: ${JSON.stringify(bad)}`);
      for (const r of s.rows) {
        const h = await episodeHistory(client, r.workflow_id, r.run_id);
        timelines.push(h.timeline);
        for (const [k, x] of Object.entries(h.activities)) activities[k] = (activities[k] ?? 0) + x;
        for (const [k, x] of Object.entries(h.queued)) queued[k] = (queued[k] ?? 0) + x;
      }
    }
    const used = cpu.since();
    const wallSec = wallMs / 1000 / datasets.length;
    await sleep(1500); // the tap writes every 100 ms; removals run after the episode closes
    table(title, wallSec, readCalls(callsFile).slice(fromCall), timelines, activities, queued);
    console.log(`  ${cpuLine(used, timelines.length)} (load ${loadBefore} -> ${load()})`);
    console.log(`  pods: ${pods.summary(from)}`);
  };

  try {
    await startBatch({ dataset: trivialDataset(1), concurrency: 1, resultsDir, taskQueue: `${queue}-kubernetes`, client }).then((h) => h.wait()); // warm
    await sleep(1000);
    const one = trivialDataset(1);
    await measure(`one trivial episode (${runs} runs)`, Array.from({ length: runs }, () => ({ dir: one, concurrency: 1 })));
    if (naiveToo) {
      const image = await new KubernetesSandboxProvider({ kubeConfig: bench.kc, namespace: bench.ns, local: new DockerSandboxProvider(new Docker()), registryHost: bench.registry }).images.id('berth-base:bookworm');
      const naive = (i: number) => naiveEpisode(bench.kc, bench.core, bench.ns, image, i);
      await naive(-1);
      console.log(`\n(naive: ${await bench.settle()})`);
      const cpu = new ClusterCpu(worker.child.pid!);
      const from = Date.now();
      const loadBefore = load();
      const sec = await naiveMany(naive, many, many);
      const used = cpu.since();
      await sleep(1500);
      console.log(`\nnaive client-node loop, ${many} at once: wall ${sec.toFixed(2)} s\n  ${cpuLine(used, many)} (load ${loadBefore} -> ${load()})\n  pods: ${pods.summary(from)}`);
    }
    // Each run on a node the one before has left: its pods' teardown outlasts their delete.
    console.log(`\n(${many} at once: ${await bench.settle()})`);
    await measure(`${many} episodes at once`, [{ dir: trivialDataset(many), concurrency: many }]);
  } finally {
    pods.stop();
    worker.child.kill('SIGTERM');
    await connection.close();
    await bench.remove();
    rmSync(callsFile, { force: true });
  }
}
