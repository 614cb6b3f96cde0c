// The seed's order and its time limit on the real engine and Temporal (docs/design.md section 7, Images; Task Folder Format
// § [environment], healthcheck): a prebuilt `docker_image` gets environment/'s files in its working directory before
// any healthcheck runs, and a healthcheck slower than the ready timeout fails the seed with its own message instead of
// ending the seed activity by its time limit. The order is checked fresh and through the warm pool (test/helpers/warm-pool.ts,
// SEED_MODES); the time limit fresh.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { SEED_MODES } from '../helpers/warm-pool.ts';

const READY_SEC = 1;

function task(id: string, healthcheck: string, files: Record<string, string> = {}): Record<string, string> {
  return {
    [`${id}/task.toml`]: `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[environment.healthcheck]\n${healthcheck}\n` +
      '[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
    [`${id}/instruction.md`]: 'do it\n',
    [`${id}/solution/solve.sh`]: '#!/bin/bash\ncat /app/data.txt > /app/out.txt\n',
    [`${id}/tests/test.sh`]: '#!/bin/bash\n[ "$(cat /app/out.txt 2>/dev/null)" = uploaded ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`${id}/${k}`, v])),
  };
}

async function runBatch(cluster: TestCluster, dataset: string, batch: { concurrency: number; warmPool?: boolean; repeats?: number }): Promise<ResultRow[]> {
  const config = join(mkdtempSync(join(tmpdir(), 'berth-seed-order-conf-')), 'berth.toml');
  writeFileSync(config, `[episode]\nsandbox_ready_timeout_s = ${READY_SEC}\n`);
  const handle = await startBatch({
    dataset, ...batch, configFile: config, resultsDir: mkdtempSync(join(tmpdir(), 'berth-seed-order-')), taskQueue: cluster.taskQueue, client: cluster.client,
  });
  return (await handle.wait()).rows;
}

// Prebuilt mode (no Dockerfile, no compose file): environment/ is uploaded to the working directory.
const PREBUILT_UPLOAD = task('prebuilt-upload', 'command = "test -f /app/data.txt"\ninterval_sec = 1\ntimeout_sec = 5\nretries = 2', { 'environment/data.txt': 'uploaded\n' });

describe.each(SEED_MODES)('seed order, $through', (mode) => {
  let cluster: TestCluster;
  let rows: Record<string, ResultRow>;
  beforeAll(async () => {
    cluster = await startTestWorkers('seed-order');
    rows = await mode.checkedRows(cluster.client, await runBatch(cluster, writeDataset(PREBUILT_UPLOAD), mode.batch(1)));
  }, 300_000);
  afterAll(async () => { await cluster?.stop(); });

  it(mode.pool ? 'the checked episode claimed a sandbox seeded ahead' : 'no episode claimed a pooled sandbox', async () => {
    expect(await mode.claimed(cluster.client, rows['prebuilt-upload']!.workflow_id)).toBe(mode.pool);
  });

  it("a prebuilt image's environment/ files are in the working directory before [environment.healthcheck] runs", () => {
    expect(rows['prebuilt-upload'], rows['prebuilt-upload']?.failure_reason ?? '').toMatchObject({ reward: 1, failure_kind: null, mask_sample: false });
  });
});

// Seeded fresh only: each of the seed's three attempts waits out the start period (over a minute), and through the
// pool no episode claims a seed that fails (test/activities/warm-pool.test.ts checks a claimed seed whose
// healthcheck then fails, with its message).
describe('seed time limit, seeded fresh', () => {
  let cluster: TestCluster;
  let row: ResultRow;
  beforeAll(async () => {
    cluster = await startTestWorkers('seed-limit');
    // Failing only after a start period longer than the seed's old limit (ready timeout + 60 s grace).
    const dataset = writeDataset(task('slow-unhealthy', `command = "echo still-warming-up; exit 1"\nstart_period_sec = ${READY_SEC + 63}\nstart_interval_sec = 5\ninterval_sec = 1\ntimeout_sec = 2\nretries = 1`,
      { 'environment/data.txt': 'uploaded\n' }));
    [row] = await runBatch(cluster, dataset, { concurrency: 1, warmPool: false }) as [ResultRow];
  }, 600_000);
  afterAll(async () => { await cluster?.stop(); });

  it("a healthcheck slower than the ready timeout fails the seed with the check's message, not by the activity's time limit", async () => {
    expect(row).toMatchObject({ mask_sample: true, failure_kind: 'harbor:seed_failed' });
    expect(row.failure_reason).toContain('still-warming-up');
    expect(row.failure_reason).toMatch(/failed 1 times in a row/);
    const history = await cluster.client.workflow.getHandle(row.workflow_id).fetchHistory();
    const timedOut = (history.events ?? []).filter((e) => e.activityTaskTimedOutEventAttributes);
    expect(timedOut).toEqual([]);
    // A sandbox that never became healthy is seeded again while attempts are left (SandboxNeverReady): the failed
    // seed's recorded start is a later attempt's.
    const attempts = (history.events ?? []).map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0);
    expect(Math.max(...attempts)).toBeGreaterThan(1);
  });
});
