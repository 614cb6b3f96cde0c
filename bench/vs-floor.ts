// `npm run bench -- vs-floor [--episodes 96] [--pairs 9] [--agent-sec 1]`: issue 25's targets, each against the raw dockerode floor
// (bench/episode.ts's loop: the same container steps an oracle episode needs) in the same run, alternating so a
// machine that drifts weighs on both sides alike:
//   one trivial episode, time ratio to the floor (target at most 0.8);
//   throughput at concurrency 8 without and with the warm pool, ratio of the floor's (at least 1.0 and 1.3);
//   not a target: that throughput again when each agent waits --agent-sec seconds (default 1; 0 skips it), both sides;
//   busy CPU-seconds per episode when 32 start at once, the machine's whole (target at most 0.7), and the floor's;
//   history events of a single-step episode (at most 42).
// Niced time is not counted as busy (a background build at `nice 19` is not an episode's cost).
import { Client, Connection } from '@temporalio/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../src/client/batch.ts';
import { ensureServer } from '../src/server/devserver.ts';
import { median, startWorker, trivialDataset } from './common.ts';
import { rawEpisode, rawMany } from './episode.ts';
import { machineBusy } from './profile/cpu.ts';
import { engineCosts, type EngineCosts } from './engine-costs.ts';

interface Target { what: string; figure: number; target: number; atMost: boolean; detail: string }

export default async function bench(args: string[]): Promise<void> {
  const opt = (name: string, d: number) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : d; };
  const episodes = opt('episodes', 96);
  const pairs = opt('pairs', 9);
  const agentSec = opt('agent-sec', 1);
  await ensureServer();
  const queue = `bench-floor-${process.pid}`;
  const worker = startWorker(queue);
  const connection = await Connection.connect({ address: '127.0.0.1:7233' });
  const client = new Client({ connection });
  const resultsDir = mkdtempSync(join(tmpdir(), 'berth-bench-results-'));
  const berthRun = async (dataset: string, concurrency: number, warmPool = true) => {
    const t = Date.now();
    const s = await (await startBatch({ dataset, concurrency, resultsDir, taskQueue: queue, client, warmPool })).wait();
    if (s.rows.some((r) => r.reward !== 1)) throw new Error(`an episode did not score 1: ${JSON.stringify(s.rows.find((r) => r.reward !== 1))}`);
    return { sec: (Date.now() - t) / 1000, rows: s.rows };
  };
  const busyDuring = async (fn: () => Promise<unknown>) => { const b = machineBusy(); await fn(); return machineBusy() - b; };
  const targets: Target[] = [];
  let engine: EngineCosts | undefined;
  let waiting: { mode: string; figure: number; detail: string }[] = [];
  try {
    await berthRun(trivialDataset(1), 1);
    const one = trivialDataset(1);
    const berth: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < pairs; i++) {
      raw.push(await rawEpisode(i));
      berth.push((await berthRun(one, 1)).sec);
    }
    targets.push({ what: 'one episode, time / floor', figure: median(berth) / median(raw), target: 0.8, atMost: true, detail: `${median(berth).toFixed(2)} s vs ${median(raw).toFixed(2)} s` });

    const half = Math.ceil(episodes / 2);
    const throughputAt8 = async (agent: number) => {
      const many = trivialDataset(half, 1, agent);
      const sec = { raw: 0, off: 0, on: 0 };
      for (let round = 0; round < 2; round++) {
        sec.raw += await rawMany(half, 8, agent);
        sec.off += (await berthRun(many, 8, false)).sec;
        sec.on += (await berthRun(many, 8, true)).sec;
      }
      const rate = (s: number) => ((2 * half) / s) * 60;
      return (['off', 'on'] as const).map((mode) => ({ mode, figure: rate(sec[mode]) / rate(sec.raw), detail: `${rate(sec[mode]).toFixed(1)}/min vs ${rate(sec.raw).toFixed(1)}/min, ${2 * half} episodes` }));
    };
    for (const t of await throughputAt8(0)) {
      targets.push({ what: `throughput at 8, warm pool ${t.mode}, / floor`, figure: t.figure, target: t.mode === 'on' ? 1.3 : 1.0, atMost: false, detail: t.detail });
    }
    if (agentSec > 0) waiting = await throughputAt8(agentSec);

    const rawCpu = (await busyDuring(() => rawMany(32, 32))) / 32;
    const thirtyTwo = trivialDataset(32);
    const offCpu = (await busyDuring(() => berthRun(thirtyTwo, 32, false))) / 32;
    const onCpu = (await busyDuring(() => berthRun(thirtyTwo, 32, true))) / 32;
    targets.push({ what: 'busy CPU-s per episode, 32 at once, pool off', figure: offCpu, target: 0.7, atMost: true, detail: `the floor ${rawCpu.toFixed(2)} CPU-s` });
    targets.push({ what: 'busy CPU-s per episode, 32 at once, pool on', figure: onCpu, target: 0.7, atMost: true, detail: `the floor ${rawCpu.toFixed(2)} CPU-s` });

    const single = (await berthRun(trivialDataset(1), 1)).rows[0]!;
    const events = (await client.workflow.getHandle(single.workflow_id).describe()).historyLength;
    targets.push({ what: 'history events, single-step episode', figure: events, target: 42, atMost: true, detail: '' });
    engine = await engineCosts();
  } finally {
    worker.child.kill('SIGTERM');
    await connection.close();
  }
  for (const t of targets) {
    const met = t.atMost ? t.figure <= t.target : t.figure >= t.target;
    console.log(`${t.what.padEnd(48)} ${t.figure.toFixed(t.figure >= 10 ? 0 : 3).padStart(7)}  target ${t.atMost ? '<=' : '>='} ${t.target}  ${met ? 'met' : 'MISSED'}  ${t.detail}`);
  }
  // Not a target: the same throughput when each agent waits (a model call's latency), the case a warm pool is for.
  for (const w of waiting) console.log(`throughput at 8, agent waits ${agentSec} s, pool ${w.mode}, / floor`.padEnd(49) + `${w.figure.toFixed(3).padStart(7)}  ${w.detail}`);
  // Not targets: what any episode pays the engine here, whoever drives it (an episode makes one container and two execs).
  if (engine) {
    console.log(`the engine alone: a container's create, start and remove ${engine.container.cpu.toFixed(2)} CPU-s (${(engine.container.wall * 1000).toFixed(0)} ms, four at a time); one exec ${engine.exec.cpu.toFixed(3)} CPU-s (${(engine.exec.wall * 1000).toFixed(0)} ms)`);
  }
}
