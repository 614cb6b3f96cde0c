import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch, type BatchSummary } from '../../src/client/batch.ts';
import { LABEL_BATCH } from '../../src/sandbox/names.ts';
import { noContainersLeft, waitForFileInEpisode } from '../helpers/docker.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { killClusterDaemon, startCluster, type ClusterDaemon } from '../helpers/temporal-server.ts';

// The Temporal cluster of scripts/setup-temporal-cluster.sh (separate frontend, history, matching and worker
// processes, 4 history shards, PostgreSQL) losing one part while a batch runs: the part is killed with -9 (PostgreSQL
// stopped in immediate mode, a crash to it) while every episode's agent is mid-turn, stays down a while, then the
// setup script starts it again. Each agent appends to /app/runs; the verifier rewards 1 only when it ran exactly once.
const TASKS = ['a', 'b', 'c'];
const AGENT_SEC = 8;
const dataset = () => writeDataset(Object.fromEntries(TASKS.flatMap((id) => [
  [`${id}/task.toml`, '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 180\n[verifier]\ntimeout_sec = 60\n'],
  [`${id}/instruction.md`, 'Run once.\n'],
  [`${id}/solution/solve.sh`, `#!/bin/bash\necho run >> /app/runs\ntouch /app/started\nsleep ${AGENT_SEC}\n`],
  [`${id}/tests/test.sh`, '#!/bin/bash\n[ "$(wc -l < /app/runs)" = 1 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n'],
])));
const AGENT_ACTIVITIES = new Set(['seedThenAgentTurn', 'agentTurn']);

/** How long each part stays down: PostgreSQL for half a minute ("the database going away"), a service for 3 s. */
const DOWN_MS: Record<string, number> = { postgres: 30_000 };

describe('the Temporal cluster losing a part mid-batch (kill -9; PostgreSQL: an immediate stop)', () => {
  let cluster: TestCluster;
  let calmMs = 0;
  const costs: string[] = [];

  const runBatch = async (during?: (batchId: string) => Promise<void>): Promise<{ summary: BatchSummary; ms: number }> => {
    const started = Date.now();
    const handle = await startBatch({
      dataset: dataset(), resultsDir: mkdtempSync(join(tmpdir(), 'berth-cluster-chaos-')), taskQueue: cluster.taskQueue, client: cluster.client,
      concurrency: TASKS.length, logger: { warn: () => undefined },
    });
    await during?.(handle.batchId);
    const summary = await handle.wait();
    return { summary, ms: Date.now() - started };
  };

  beforeAll(async () => {
    cluster = await startTestWorkers('cluster-chaos');
    // Twice: the first batch also warms the worker up (workflow bundle, image checks); the second is the yardstick.
    for (let i = 0; i < 2; i++) {
      const calm = await runBatch();
      expect(calm.summary.metrics).toMatchObject({ scored: TASKS.length, masked: 0, failed: 0 });
      calmMs = calm.ms;
    }
  }, 300_000);

  afterAll(async () => {
    await startCluster();
    await cluster?.stop();
    console.log(['cluster chaos: what each fault cost', `  undisturbed batch: ${(calmMs / 1000).toFixed(1)} s`, ...costs].join('\n'));
  }, 180_000);

  it.each<[ClusterDaemon]>([['history'], ['matching'], ['frontend'], ['postgres']])('%s: the batch finishes, no turn redone, no row lost, no sandbox left', async (daemon) => {
    const down = DOWN_MS[daemon] ?? 3_000;
    let restartMs = 0;
    const { summary, ms } = await runBatch(async (batchId) => {
      await Promise.all(TASKS.map((id) => waitForFileInEpisode(`berth/${batchId}/${id}/1`, '/app/started', 120_000, `task ${id}'s agent`)));
      await killClusterDaemon(daemon);
      await new Promise((r) => setTimeout(r, down));
      const t = Date.now();
      await startCluster();
      restartMs = Date.now() - t;
    });
    // Each agent turn's activity: the attempt that finished it, and why an earlier one did not.
    const turns = await Promise.all(TASKS.map(async (id) => {
      const events = (await cluster.client.workflow.getHandle(`berth/${summary.batchId}/${id}/1`).fetchHistory()).events ?? [];
      const agentScheduled = new Set(events.filter((e) => AGENT_ACTIVITIES.has(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '')).map((e) => String(e.eventId)));
      const started = events.map((e) => e.activityTaskStartedEventAttributes).filter((a) => a && agentScheduled.has(String(a.scheduledEventId)));
      return { id, attempts: started.map((a) => a!.attempt ?? 0), lastFailure: started.map((a) => a!.lastFailure?.message).filter(Boolean).join('; ') };
    }));
    const retried = turns.filter((t) => t.attempts.some((a) => a > 1)).map((t) => `${t.id} attempt ${t.attempts.join(',')} after "${t.lastFailure}"`);
    costs.push(`  ${daemon}: down ${(down / 1000).toFixed(0)} s, restart ${(restartMs / 1000).toFixed(1)} s, batch ${(ms / 1000).toFixed(1)} s`
      + ` (${((ms - calmMs) / 1000).toFixed(1)} s more than undisturbed); agent turns retried: ${retried.length === 0 ? 'none' : retried.join('; ')}`);

    expect(summary.rows.map((r) => r.task_id).sort()).toEqual(TASKS);
    // Reward 1: the verifier found /app/runs with one line, so no agent ran twice (a retried turn re-attaches).
    for (const row of summary.rows) expect(row, row.task_id).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(summary.metrics).toMatchObject({ scored: TASKS.length, masked: 0, failed: 0 });
    // A service lost for seconds costs no agent turn a second attempt. PostgreSQL gone for 30 s is longer than a
    // turn's heartbeat timeout: the history service times out the heartbeats it could not record, and the turn's
    // next attempt re-attaches to the agent (the reward above says it did not run it again).
    if (daemon !== 'postgres') for (const t of turns) expect(t.attempts, `task ${t.id}'s agent turn attempts`).toEqual([1]);
    for (const t of turns) expect(t.attempts.length, `task ${t.id}'s agent turn: one started event`).toBe(1);
    await noContainersLeft(`${LABEL_BATCH}=${summary.batchId}`, 30_000);
  }, 420_000);
});
