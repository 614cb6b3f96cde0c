import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';
import { ownWorkerQueues, waitUntil } from '../helpers/worker-process.ts';
import { repoRoot } from '../helpers/cli.ts';
import { temporalAddress } from '../../src/config/temporal.ts';
import type { Group } from '../../src/rollouts/types.ts';
import { readGroups } from '../helpers/rollout-groups.ts';

/** A real `berth serve` process (so the test can kill -9 it), on the test's own queue. */
function startServeProcess(env: Record<string, string>, port: number, dataset: string): { child: ChildProcess; kill9(): void; output: () => string } {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'berth.mjs'), 'serve', '--port', String(port), '--dataset', dataset, '--agent', 'oracle'], {
    cwd: repoRoot, env: { ...process.env, ...env, TEMPORAL_ADDRESS: temporalAddress().address }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  return { child, output: () => out, kill9: () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } } };
}

/** Tasks t0..t2 whose agent runs 6 s; the test rewards 1 only when the agent ran exactly once (no redone turn). */
const onceTasks = () => writeDataset(Object.fromEntries([0, 1, 2].flatMap((i) => [
  [`t${i}/task.toml`, BASE_TOML], [`t${i}/instruction.md`, 'Once.\n'],
  [`t${i}/solution/solve.sh`, '#!/bin/bash\necho run >> /app/runs\ntouch /app/started\nsleep 6\n'],
  [`t${i}/tests/test.sh`, '#!/bin/bash\n[ "$(wc -l < /app/runs)" = 1 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n'],
])));

const answers = async (url: string) => fetch(`${url}/health`).then((r) => r.ok, () => false);

/** Starts berth serve until it answers: it refuses to start (exit 1) while no worker polls the queue yet. */
async function serveWhenReady(env: Record<string, string>, port: number, dataset: string, serves: Array<ReturnType<typeof startServeProcess>>): Promise<string> {
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 240_000;
  for (;;) {
    const s = startServeProcess(env, port, dataset);
    serves.push(s);
    const exited = new Promise<boolean>((r) => s.child.once('exit', () => r(true)));
    while (!(await answers(url))) {
      if (Date.now() > deadline) throw new Error(`berth serve on ${url} never answered: ${s.output()}`);
      if (await Promise.race([exited, new Promise<boolean>((r) => setTimeout(() => r(false), 500))])) break;
    }
    if (await answers(url)) return url;
  }
}

describe('a rollout run through kill -9 of its worker, of berth serve and of the trainer (docs/design.md section 8)', () => {
  const own = ownWorkerQueues('rollkill');
  const serves: Array<ReturnType<typeof startServeProcess>> = [];
  afterAll(async () => {
    for (const s of serves) s.kill9();
    await own.stop();
  });

  it('every group is delivered, each acknowledged once, no turn redone, no sandbox left', async () => {
    const key = `kill-${randomBytes(4).toString('hex')}`;
    const dataset = onceTasks();
    own.startWorker();
    const portA = 20000 + Math.floor(Math.random() * 20000);
    const urlA = await serveWhenReady(own.env, portA, dataset, serves);
    const start = await fetch(`${urlA}/runs`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      // A low continue-as-new threshold: the run hands its running episodes over to its next workflow run too.
      body: JSON.stringify({ key, n: 2, concurrency: 6, policy: { endpoint: 'http://127.0.0.1:9/v1', model: 'fake' }, continue_as_new_after: 2 }),
    });
    expect(start.status).toBe(201);

    // Mid-group: an agent is running when the worker and berth serve both die.
    await waitForFileInEpisode(`berth/rollout-${key}/t0/g0-1`, '/app/started', 120_000, 'the first agent');
    own.workers[0]!.kill9();
    serves.at(-1)!.kill9();
    own.startWorker();
    const urlB = await serveWhenReady(own.env, portA + 1, dataset, serves);

    // The trainer reads one group and dies before acknowledging it; on reconnecting it gets that group again.
    const [unacked] = await readGroups(urlB, key, 1);
    const acked: number[] = [];
    const received: Group[] = [];
    while (acked.length < 3) {
      for (const g of await readGroups(urlB, key, 1)) {
        received.push(g);
        await fetch(`${urlB}/runs/${key}/ack`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ seq: g.seq }) });
        acked.push(g.seq);
      }
    }
    expect(received[0]!.seq).toBe(unacked!.seq);
    expect(acked).toEqual([1, 2, 3]);
    expect(received.map((g) => g.task_id).sort()).toEqual(['t0', 't1', 't2']);
    for (const g of received) expect(g.rows.map((r) => [r.valid, r.reward])).toEqual([[true, 1], [true, 1]]);
    await waitUntil(async () => ((await (await fetch(`${urlB}/runs/${key}`)).json()) as { state: string }).state === 'done', 30_000, 'the run to close');
    // Nothing more after the last acknowledged group, whatever cursor a reader asks.
    expect(await readGroups(urlB, key, 1)).toEqual([]);
    await noContainersLeft(`berth.batch=rollout-${key}`, 30_000);
  }, 420_000);
});
