// `npm run bench -- store [--trials 12] [--episodes 32] [--rounds 2]`: the results store (issue 39) against a SeaweedFS S3 server of
// its own (test/helpers/s3-server.ts).
// (1) Upload time and CPU per trial: Berth's upload of a trial folder (each file streamed and hashed, the manifest
//     last) against a plain SDK upload of the same files (lib-storage's Upload per file, as many at once, nothing
//     else), alternating in
//     the same run. Target: ratio at most 1.2.
// (2) Episode throughput at concurrency 8 with the store on against off, alternating batches of episodes/rounds on one
//     worker (`--rounds 2` by default; each mode runs `--episodes` in all). Target: at least 0.95. It prints the CPU per
//     episode of each process (worker, Temporal, engine, this client, weed, and the rest of the machine, which on a
//     shared machine includes other work) and the histories of one episode and of its batch each way.
import { Upload } from '@aws-sdk/lib-storage';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../src/client/batch.ts';
import { storeLocationOf } from '../src/config/results-store.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { attemptKey, filesUnder, ResultsStore, uploadAttempt, UPLOADS_AT_ONCE } from '../src/store/index.ts';
import { startS3Server } from '../test/helpers/s3-server.ts';
import { batchWorkflowId } from '../src/client/episodes.ts';
import { median, startWorker, trivialDataset } from './common.ts';
import { findGroups, processCpu, sampleCpu } from './profile/cpu.ts';

/** A trial folder like a coding agent's: a trajectory, logs, the verifier's output, and one 8 MiB artifact. */
function trialFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-trial-'));
  const files: Record<string, number> = {
    'turn-1/agent/trajectory.json': 400_000, 'turn-1/agent/response.txt': 4_000, 'turn-1/agent/oracle.txt': 20_000,
    'turn-1/verifier/reward.txt': 2, 'turn-1/verifier/test-stdout.txt': 60_000, 'turn-1/artifacts/build.tar': 8 * 1024 * 1024,
    'seeded-sandbox.json': 2_000, 'verify-outcome.json': 1_000,
  };
  for (let i = 0; i < 12; i++) files[`turn-1/agent/sessions/step-${i}.jsonl`] = 30_000;
  for (const [p, size] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), randomBytes(size));
  }
  return dir;
}

const cpuMs = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

async function measure(fn: () => Promise<unknown>): Promise<{ sec: number; cpuMs: number }> {
  const c = process.cpuUsage();
  const t = process.hrtime.bigint();
  await fn();
  return { sec: Number(process.hrtime.bigint() - t) / 1e9, cpuMs: cpuMs(process.cpuUsage(c)) };
}

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const trials = opt('trials', 12);
  const episodes = opt('episodes', 32);
  // Rounds of (off, on) halves: more rounds average out a machine whose other load changes between halves.
  const rounds = opt('rounds', 2);
  const s3 = await startS3Server();
  const settings = { ...storeLocationOf(`s3://${s3.bucket}/bench`), endpoint: s3.endpoint, region: s3.region, pathStyle: true, keepLocal: true };
  const store = new ResultsStore(settings, { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });
  try {
    // (1) Same files, same client, alternating; a first round of each warms connections.
    const dir = trialFolder();
    const paths = filesUnder(dir);
    // The same number of files at once as Berth's upload (UPLOADS_AT_ONCE), so the ratio is what hashing and the
    // manifest cost.
    const plain = async (k: number) => {
      let next = 0;
      await Promise.all(Array.from({ length: UPLOADS_AT_ONCE }, async () => {
        while (next < paths.length) {
          const p = paths[next++]!;
          await new Upload({ client: store.client, params: { Bucket: s3.bucket, Key: `plain/${k}/${p}`, Body: createReadStream(join(dir, p)) }, partSize: 8 * 1024 * 1024, queueSize: 4 }).done();
        }
      }));
    };
    const berth = (k: number) => uploadAttempt(store, attemptKey(settings, 'bench', `w${k}`, 'r'), dir, { batchId: 'bench', workflowId: `w${k}`, runId: 'r', host: 'bench' });
    await plain(-1);
    await berth(-1);
    const ours: Array<{ sec: number; cpuMs: number }> = [];
    const theirs: Array<{ sec: number; cpuMs: number }> = [];
    for (let k = 0; k < trials; k++) {
      theirs.push(await measure(() => plain(k)));
      ours.push(await measure(() => berth(k)));
    }
    const sec = (xs: typeof ours) => median(xs.map((x) => x.sec));
    const cpu = (xs: typeof ours) => median(xs.map((x) => x.cpuMs));
    const mb = paths.length;
    console.log(`(1) one trial folder (${mb} files, 8.9 MB), ${trials} uploads each: berth ${sec(ours).toFixed(3)} s and ${cpu(ours).toFixed(0)} ms CPU, ` +
      `plain SDK ${sec(theirs).toFixed(3)} s and ${cpu(theirs).toFixed(0)} ms CPU (medians)`);
    console.log(`    ratio: time ${(sec(ours) / sec(theirs)).toFixed(2)}, CPU ${(cpu(ours) / cpu(theirs)).toFixed(2)} (target at most 1.2)`);

    // (2) One worker whose berth.toml names the store; a batch carries the store only when the client's does.
    await ensureServer();
    const cfg = mkdtempSync(join(tmpdir(), 'berth-bench-store-'));
    const withStore = join(cfg, 'store.toml');
    const without = join(cfg, 'none.toml');
    writeFileSync(withStore, s3.berthToml('bench-episodes'));
    writeFileSync(without, '');
    const queue = `bench-store-${process.pid}`;
    const worker = startWorker(queue, { env: { BERTH_CONFIG: withStore } });
    const connection = await Connection.connect({ address: '127.0.0.1:7233' });
    const client = new Client({ connection });
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-results-'));
    const groups = findGroups(worker.child.pid!);
    const cpuNow = () => ({ ...sampleCpu(groups).cpu, weed: processCpu(s3.pid) });
    // CPU-seconds per process group, summed over the measured runs of each mode.
    const cpuOf: Record<'on' | 'off', Record<string, number>> = { on: {}, off: {} };
    const lastOf: Partial<Record<'on' | 'off', { batchId: string; workflowId: string }>> = {};
    const run = async (dataset: string, config: string, mode?: 'on' | 'off') => {
      process.env.BERTH_CONFIG = config;
      const before = cpuNow();
      const t = Date.now();
      const s = await (await startBatch({ dataset, concurrency: 8, resultsDir: mkdtempSync(join(resultsDir, 'b-')), taskQueue: queue, client })).wait();
      const sec = (Date.now() - t) / 1000;
      const after = cpuNow();
      if (mode) {
        for (const [k, v] of Object.entries(after)) cpuOf[mode][k] = (cpuOf[mode][k] ?? 0) + v - (before[k as keyof typeof before] ?? 0);
        lastOf[mode] = { batchId: s.batchId, workflowId: s.rows[0]!.workflow_id };
      }
      if (s.rows.some((r) => r.reward !== 1)) throw new Error(`an episode did not score 1: ${JSON.stringify(s.rows.find((r) => r.reward !== 1))}`);
      if (config === withStore && s.rows.some((r) => !r.store_key)) throw new Error(`an episode's files were not stored: ${JSON.stringify(s.rows.find((r) => !r.store_key))}`);
      return sec;
    };
    try {
      await run(trivialDataset(2), withStore);
      const half = Math.ceil(episodes / rounds);
      const many = trivialDataset(half);
      let on = 0;
      let off = 0;
      for (let round = 0; round < rounds; round++) {
        off += await run(many, without, 'off');
        on += await run(many, withStore, 'on');
      }
      const onRate = ((rounds * half) / on) * 60;
      const offRate = ((rounds * half) / off) * 60;
      console.log(`(2) ${rounds * half} episodes each way at concurrency 8 (${rounds} alternating rounds of ${half}): store on ${onRate.toFixed(1)}/min, off ${offRate.toFixed(1)}/min ` +
        `(ratio ${(onRate / offRate).toFixed(2)}, target at least 0.95)`);
      const perEpisode = (mode: 'on' | 'off') => Object.entries(cpuOf[mode]).map(([k, v]) => `${k} ${((v / (rounds * half)) * 1000).toFixed(0)}`).join(', ');
      console.log(`    CPU ms per episode, store on: ${perEpisode('on')}`);
      console.log(`    CPU ms per episode, store off: ${perEpisode('off')}`);
      for (const mode of ['on', 'off'] as const) {
        const last = lastOf[mode]!;
        console.log(`    history, store ${mode}: episode ${await historyCounts(client, last.workflowId)}; batch per episode ${await historyCounts(client, batchWorkflowId(last.batchId), half)}`);
      }
    } finally {
      worker.child.kill('SIGTERM');
      await connection.close();
    }
  } finally {
    store.destroy();
    await s3.stop();
  }
}

/** Event counts of a workflow's history (divided by `per`): workflow tasks, activities, signals, child events, all events. */
async function historyCounts(client: Client, workflowId: string, per = 1): Promise<string> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const n = (test: (e: (typeof events)[number]) => unknown) => (events.filter(test).length / per).toFixed(1);
  const activities = new Map<string, number>();
  for (const e of events) {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) activities.set(name, (activities.get(name) ?? 0) + 1);
  }
  return `${n((e) => e.workflowTaskCompletedEventAttributes)} workflow tasks, ${n((e) => e.activityTaskScheduledEventAttributes)} activities ` +
    `(${[...activities].map(([k, v]) => `${k} ${(v / per).toFixed(1)}`).join(', ')}), ${n((e) => e.workflowExecutionSignaledEventAttributes)} signals in, ` +
    `${n((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes)} signals out, ${n(() => true)} events`;
}
