import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { listEpisodes } from '../../src/client/episodes.ts';
import { berth } from '../helpers/cli.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';
import { waitUntil } from '../helpers/worker-process.ts';

describe('cancelling and retrying one episode of a running batch (issue 17)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('cancel-one'); });
  afterAll(async () => { await cluster?.stop(); delete process.env.BERTH_CANCEL_SLEEP; });

  it('only that episode ends (sandbox gone, outcome failed, not scored); the rest finish; its retry is the one reported', async () => {
    // The worker runs in this process: the slow task sleeps as long as this variable says when its sandbox is seeded.
    process.env.BERTH_CANCEL_SLEEP = '300';
    const dataset = writeDataset({
      ...echoTask('quick-1'), ...echoTask('quick-2'),
      'slow/task.toml': `${BASE_TOML.replace('timeout_sec = 60\n[verifier]', 'timeout_sec = 400\n[verifier]')}[environment.env]\nSLEEP = "\${BERTH_CANCEL_SLEEP}"\n`,
      'slow/instruction.md': 'take your time\n',
      'slow/solution/solve.sh': '#!/bin/bash\ntouch /app/started\nsleep "$SLEEP"\necho ok > out.txt\n',
      'slow/tests/test.sh': '#!/bin/bash\ngrep -q ok /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-cancel-one-'));
    const handle = await startBatch({ dataset, repeats: 2, concurrency: 6, resultsDir, taskQueue: cluster.taskQueue, client: cluster.client });
    const slow1 = `berth/${handle.batchId}/slow/1`;
    await waitForFileInEpisode(slow1, '/app/started', 240_000, "the slow episode's agent");

    // Nothing named that runs: a clear refusal, nothing cancelled.
    const none = await berth(['cancel', handle.batchId, '--task', 'no-such-task']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('No running episode of no-such-task');
    const cli = await berth(['cancel', handle.batchId, '--task', 'slow', '--repeat', '1', '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ cancelled: [slow1] });
    await noContainersLeft(`berth.workflow=${slow1}`, 30_000);

    // Repeat 2 of the slow task was not named: it still runs. (It sleeps for minutes, so the test then cancels it too.)
    const status = async (id: string) => (await listEpisodes(cluster.client, handle.batchId)).find((e) => e.workflowId === id)?.status;
    // Cancelling is a request: the episode closes once its teardown ran.
    await waitUntil(async () => (await status(slow1)) === 'CANCELLED', 120_000, 'the cancelled episode to close');
    expect(await status(`berth/${handle.batchId}/slow/2`)).toBe('RUNNING');
    const slow2 = await handle.cancelEpisodes({ taskIds: ['slow'], repeat: 2 });
    expect(slow2).toEqual({ cancelled: [`berth/${handle.batchId}/slow/2`], closed: [] });

    const first = await handle.wait();
    expect(first.rows.map((r) => [r.task_id, r.repeat, r.reward]).sort()).toEqual([['quick-1', 1, 1], ['quick-1', 2, 1], ['quick-2', 1, 1], ['quick-2', 2, 1]]);
    expect(first.metrics).toMatchObject({ scored: 4, masked: 0, failed: 2, mean_reward: 1 });
    expect(await cluster.client.workflow.getHandle(`berth/${handle.batchId}`).result()).toMatchObject({ done: 6, scored: 4, failed: 2 });

    process.env.BERTH_CANCEL_SLEEP = '0';
    const retried = await handle.retry({ taskIds: ['slow'], repeat: 1 });
    expect(retried.retried).toEqual([`berth/${handle.batchId}/slow/1~a2`]);
    const rows = readFileSync(join(resultsDir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.filter((r) => r.task_id === 'slow').map((r) => [r.repeat, r.attempt, r.reward])).toEqual([[1, 2, 1]]);
    expect(retried.metrics).toMatchObject({ scored: 5, failed: 1 });
    await noContainersLeft(`berth.batch=${handle.batchId}`, 30_000);
  }, 480_000);
});
