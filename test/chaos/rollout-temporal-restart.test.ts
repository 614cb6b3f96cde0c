// The Temporal server killed (-9) mid-group under a rollout run and started again on its own database file
// (issue 41, Durability): the run, its episodes and the trainer's cursor live in Temporal, so after the restart every
// group arrives exactly once, no agent turn is done twice and no sandbox is left. Kills a server, so it runs one of
// its own (own port and home), as server-restart.test.ts does.
import { afterAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTemporalCli } from '../../src/server/binary.ts';
import { ensureServer, serverPid, stopServer } from '../../src/server/devserver.ts';
import { startServe, type Serving } from '../../src/serve/server.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';
import { FakePolicy } from '../helpers/fake-policy.ts';
import { ackGroups, postJson } from '../helpers/rollout-groups.ts';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';

const TASKS = ['t0', 't1'];

/** Tasks whose test rewards 1 only when the agent's one command ran exactly once (a redone turn runs it twice). */
const onceTasks = () => writeDataset(Object.fromEntries(TASKS.flatMap((id) => [
  [`${id}/task.toml`, BASE_TOML], [`${id}/instruction.md`, `Task ${id}: run the command once.\n`],
  [`${id}/tests/test.sh`, '#!/bin/bash\n[ "$(wc -l < /app/runs)" = 1 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n'],
])));

describe('a rollout run through a kill -9 and restart of the Temporal server (issue 41, Durability)', () => {
  let worker: WorkerProcess | undefined;
  let connection: Connection | undefined;
  let serving: Serving | undefined;
  let engine: FakePolicy | undefined;
  afterAll(async () => {
    await serving?.close();
    await worker?.stop();
    await connection?.close();
    await engine?.stop();
    await stopServer();
  });

  it('every group is delivered and acknowledged exactly once, no agent call or command is redone, no sandbox is left', async () => {
    process.env.TEMPORAL_CLI = findTemporalCli().path;
    process.env.BERTH_HOME = mkdtempSync(join(tmpdir(), 'berth-rollout-restart-'));
    process.env.BERTH_TEMPORAL_PORT = '7641';
    process.env.BERTH_UI_PORT = '8641';
    const address = '127.0.0.1:7641';
    await ensureServer();
    // The agent's first call runs a command that takes 8 s (the kill lands while it runs); its second call ends.
    engine = await new FakePolicy({
      model: 'policy-1b',
      script: ({ messages }) => (messages.at(-1)?.['role'] === 'tool'
        ? { content: 'ran it' }
        : { content: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command: 'echo run >> /app/runs; sleep 8' } }] }),
    }).start();
    const queue = `rollout-restart-${randomBytes(3).toString('hex')}`;
    worker = startWorkerProcess({ TEMPORAL_ADDRESS: address, BERTH_TASK_QUEUE: queue, BERTH_HOST_QUEUE_SUFFIX: queue });
    connection = await Connection.connect({ address });
    serving = await startServe({ client: new Client({ connection }), taskQueue: queue, port: 0, dataset: onceTasks(), agent: 'openai' });

    const key = `restart-${randomBytes(4).toString('hex')}`;
    const start = await postJson(`${serving.url}/runs`, {
      key, n: 2, concurrency: 4, agent_args: { base_url: `${engine.url}/v1`, model: 'policy-1b' },
      policy: { endpoint: `${engine.url}/v1`, model: 'policy-1b' },
    });
    expect(start.status).toBe(201);

    // Mid-group: an agent's command is running when the server dies; it comes back on the same database file.
    await waitForFileInEpisode(`berth/rollout-${key}/t0/g0-1`, '/app/runs', 240_000, 'the first agent\'s command');
    const pid = serverPid()!;
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => serverPid() === undefined, 10_000, 'the killed server to be gone');
    await new Promise((r) => setTimeout(r, 3000));
    await ensureServer();

    // The trainer reconnects whenever its stream breaks, after its last acknowledged group.
    const { acked, redelivered } = await ackGroups(serving.url, key, TASKS.length, 240_000);
    expect(redelivered).toEqual([]);
    expect(acked.map((g) => g.seq)).toEqual([1, 2]);
    expect(acked.map((g) => g.task_id).sort()).toEqual(TASKS);
    for (const g of acked) {
      expect(g.masked).toBe(false);
      expect(g.rows.map((r) => [r.valid, r.reward, r.attempt])).toEqual([[true, 1, 1], [true, 1, 1]]);
      for (const r of g.rows) expect(r.training).toMatchObject({ calls: 2, exact: true });
    }
    // Each episode's two calls reached the engine once: n samples x 2 calls per task, none sent again.
    for (const id of TASKS) {
      expect(engine.seen.filter((s) => JSON.stringify(s.body['messages']).includes(`Task ${id}:`))).toHaveLength(2 * 2);
    }
    await waitUntil(async () => ((await (await fetch(`${serving!.url}/runs/${key}`)).json()) as { state: string }).state === 'done', 60_000, 'the run to close');
    await noContainersLeft(`berth.batch=rollout-${key}`, 60_000);
  }, 420_000);
});
