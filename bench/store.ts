// `npm run bench -- store [--trials 12] [--episodes 32]`: the results store (issue 39) against a SeaweedFS S3 server of
// its own (test/helpers/s3-server.ts).
// (1) Upload time and CPU per trial: Berth's upload of a trial folder (each file streamed and hashed, the manifest
//     last) against a plain SDK upload of the same files (lib-storage's Upload per file, as many at once, nothing
//     else), alternating in
//     the same run. Target: ratio at most 1.2.
// (2) Episode throughput at concurrency 8 with the store on against off, alternating halves on one worker. Target: at
//     least 0.95.
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
import { median, startWorker, trivialDataset } from './common.ts';

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
    const run = async (dataset: string, config: string) => {
      process.env.BERTH_CONFIG = config;
      const t = Date.now();
      const s = await (await startBatch({ dataset, concurrency: 8, resultsDir, taskQueue: queue, client })).wait();
      if (s.rows.some((r) => r.reward !== 1)) throw new Error(`an episode did not score 1: ${JSON.stringify(s.rows.find((r) => r.reward !== 1))}`);
      if (config === withStore && s.rows.some((r) => !r.store_key)) throw new Error(`an episode's files were not stored: ${JSON.stringify(s.rows.find((r) => !r.store_key))}`);
      return (Date.now() - t) / 1000;
    };
    try {
      await run(trivialDataset(2), withStore);
      const half = Math.ceil(episodes / 2);
      const many = trivialDataset(half);
      let on = 0;
      let off = 0;
      for (let round = 0; round < 2; round++) {
        off += await run(many, without);
        on += await run(many, withStore);
      }
      const onRate = ((2 * half) / on) * 60;
      const offRate = ((2 * half) / off) * 60;
      console.log(`(2) ${2 * half} episodes at concurrency 8 (two alternating halves): store on ${onRate.toFixed(1)}/min, off ${offRate.toFixed(1)}/min ` +
        `(ratio ${(onRate / offRate).toFixed(2)}, target at least 0.95)`);
    } finally {
      worker.child.kill('SIGTERM');
      await connection.close();
    }
  } finally {
    store.destroy();
    await s3.stop();
  }
}
