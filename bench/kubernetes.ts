// `npm run bench -- kubernetes [--pairs 5] [--episodes 64]`: Berth's episodes on the Kubernetes sandbox of the local
// cluster against a naive client-node loop measured in the same run (issue 23, Benchmark): create a pod, wait until
// it runs, exec the solution, exec the test, delete it. (1) one trivial episode (median of pairs; ratio Berth/naive,
// issue 40's target at most 0.8), (2) 32 at once (wall time, the mean of two runs each in the order naive, Berth,
// Berth, naive), (3) throughput at concurrency 8 (ratio of episodes per minute). Every timed run starts on a settled
// node (kube-setup.ts settleNode).
// Everything runs in a namespace of the benchmark's own, removed at the end.
import { type CoreV1Api, Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startBatch } from '../src/client/batch.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../src/sandbox/index.ts';
import { median, startWorker, trivialDataset } from './common.ts';
import { kubeBenchNamespace } from './kube-setup.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The naive user's exec: argv in the pod's container, resolved with its exit status. */
function exec(kc: KubeConfig, ns: string, pod: string, script: string): Promise<void> {
  const sink = new Writable({ write: (_c, _e, done) => done() });
  return new Promise((resolve, reject) => {
    new Exec(kc).exec(ns, pod, 'main', ['bash', '-c', script], sink, sink, null, false, (st: V1Status) => {
      if (st.status === 'Success') resolve(); else reject(new Error(`exec in ${pod}: ${st.message ?? st.reason}`));
    }).catch(reject);
  });
}

/** The floor: one oracle episode as a naive client-node loop does it. */
export async function naiveEpisode(kc: KubeConfig, core: CoreV1Api, ns: string, image: string, i: number): Promise<number> {
  const t = Date.now();
  const name = `naive-${process.pid}-${i}-${Date.now().toString(36)}`;
  await core.createNamespacedPod({ namespace: ns, body: {
    metadata: { name, labels: { 'berth.bench': 'naive' } },
    spec: { restartPolicy: 'Never', containers: [{ name: 'main', image, command: ['sleep', 'infinity'], workingDir: '/app' }] },
  } });
  for (;;) {
    const pod = await core.readNamespacedPod({ name, namespace: ns });
    if (pod.status?.containerStatuses?.[0]?.state?.running) break;
    if (pod.status?.phase === 'Failed') throw new Error(`pod ${name} failed`);
    await sleep(100);
  }
  await exec(kc, ns, name, 'mkdir -p /app /logs/verifier && cd /app && echo ok > out.txt');
  await exec(kc, ns, name, 'cd /app && grep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt && cat /logs/verifier/reward.txt');
  await core.deleteNamespacedPod({ name, namespace: ns, gracePeriodSeconds: 0 });
  return (Date.now() - t) / 1000;
}

export async function naiveMany(run: (i: number) => Promise<number>, n: number, concurrency: number): Promise<number> {
  const t = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next < n) await run(next++); }));
  return (Date.now() - t) / 1000;
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const pairs = opt('pairs', 5);
  // 64: each half at concurrency 8 is four rounds of 8, a steady state (16 was one round each, after the settle: the
  // time of 8 at once, not a throughput).
  const episodes = opt('episodes', 64);
  const { kc, core, ns, registry, config, settle, remove } = await kubeBenchNamespace();
  await ensureServer();
  const queue = `bench-k8s-${process.pid}`;
  const worker = startWorker(queue, { env: { BERTH_CONFIG: config } });
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-results-'));
  const berthRun = async (dataset: string, concurrency: number) => {
    const t = Date.now();
    const s = await (await startBatch({ dataset, concurrency, resultsDir, taskQueue: `${queue}-kubernetes`, client })).wait();
    if (s.rows.some((r) => r.reward !== 1)) throw new Error(`an episode did not score 1: ${JSON.stringify(s.rows.find((r) => r.reward !== 1))}`);
    return { sec: (Date.now() - t) / 1000, rows: s.rows };
  };
  try {
    await berthRun(trivialDataset(1), 1); // warm the worker (bundle, connections) and push the base image
    // The image the batch pinned: the base image pushed to the cluster's registry, by digest.
    const image = await new KubernetesSandboxProvider({ kubeConfig: kc, namespace: ns, local: new DockerSandboxProvider(new Docker()), registryHost: registry }).images.id('berth-base:bookworm');
    const naive = (i: number) => naiveEpisode(kc, core, ns, image, i);
    await naive(-1); // the naive loop warmed too (image on the node, connections)

    const one = trivialDataset(1);
    const berth: number[] = [];
    const raw: number[] = [];
    const phases: Record<string, number[]> = {};
    for (let i = 0; i < pairs; i++) {
      await settle();
      raw.push(await naive(i));
      await settle();
      const run = await berthRun(one, 1);
      berth.push(run.sec);
      for (const [k, v] of Object.entries(run.rows[0]?.timings ?? {})) (phases[k] ??= []).push(v);
    }
    console.log(`(1) one episode: berth median ${median(berth).toFixed(2)} s, naive client-node loop ${median(raw).toFixed(2)} s (ratio ${(median(berth) / median(raw)).toFixed(2)}; target at most 0.8)`);
    const inPhases = Object.values(phases).reduce((sum, v) => sum + median(v), 0);
    console.log(`    berth phases (medians): ${Object.entries(phases).map(([k, v]) => `${k} ${median(v).toFixed(2)} s`).join(', ')}; ` +
      `outside them ${(median(berth) - inPhases).toFixed(2)} s (the batch's start and end, workflow tasks, activity dispatch: Temporal)`);

    // Twice each, in the order naive, Berth, Berth, naive, each run on a node the run before has left (settle).
    const many32: Record<'naive' | 'berth', number[]> = { naive: [], berth: [] };
    const thirtyTwo = trivialDataset(32);
    for (const side of ['naive', 'berth', 'berth', 'naive'] as const) {
      const settled = await settle();
      const sec = side === 'naive' ? await naiveMany(naive, 32, 32) : (await berthRun(thirtyTwo, 32)).sec;
      many32[side].push(sec);
      console.log(`    32 at once, ${side}: ${sec.toFixed(1)} s (${settled})`);
    }
    const [berthAll, rawAll] = [many32.berth, many32.naive].map((xs) => xs.reduce((a, b) => a + b, 0) / xs.length) as [number, number];
    console.log(`(2) 32 concurrent episodes: berth ${berthAll.toFixed(1)} s, naive ${rawAll.toFixed(1)} s (means of 2; ratio ${(berthAll / rawAll).toFixed(2)}; target at most 1.2)`);

    // Two alternating halves each, so a machine that drifts during the run weighs on both sides alike.
    const half = Math.ceil(episodes / 2);
    const many = trivialDataset(half);
    let rawSec = 0;
    let berthSec = 0;
    for (let round = 0; round < 2; round++) {
      await settle();
      rawSec += await naiveMany(naive, half, 8);
      await settle();
      berthSec += (await berthRun(many, 8)).sec;
    }
    const rawRate = ((2 * half) / rawSec) * 60;
    const berthRate = ((2 * half) / berthSec) * 60;
    console.log(`(3) ${2 * half} episodes at concurrency 8: berth ${berthRate.toFixed(1)}/min, naive ${rawRate.toFixed(1)}/min (throughput ratio ${(berthRate / rawRate).toFixed(2)}; target at least 1.0)`);
    console.log(`kubernetes: ${median(berth).toFixed(2)} s per episode (ratio ${(median(berth) / median(raw)).toFixed(2)} to the naive loop), throughput ratio at concurrency 8 ${(berthRate / rawRate).toFixed(2)}`);
  } finally {
    worker.child.kill('SIGTERM');
    await connection.close();
    await remove();
  }
}
