// A sidecar that exits on its own is not a lost sandbox (issue 22; docs/design.md section 3, sandbox loss: only a
// container gone or an engine that stops answering masks). Exit 0 during the rollout is a one-shot service done;
// a non-zero exit is a note on the row with its code and log tail, and the episode is scored (the agent may have
// caused it). Harbor 0.25 does not watch sidecars at all: its trial verifies and scores whatever they did.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, cleanUpBatch } from './helpers.ts';

/** The sidecar runs `side` and ends; the agent waits (bounded) until its name stops resolving, then the verifier scores 1. */
function task(id: string, side: string): Record<string, string> {
  return {
    [`${id}/task.toml`]: `[environment]\ndocker_image = "${BASE_IMAGE}"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n`,
    [`${id}/instruction.md`]: 'Wait for the sidecar.\n',
    [`${id}/environment/docker-compose.yaml`]: `services:\n  side:\n    image: ${BASE_IMAGE}\n    command: ["sh", "-c", ${JSON.stringify(side)}]\n`,
    [`${id}/solution/solve.sh`]: '#!/bin/bash\nfor i in $(seq 120); do getent hosts side >/dev/null || break; sleep 0.5; done\n',
    [`${id}/tests/test.sh`]: '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
  };
}

describe('a sidecar that exits during the rollout', () => {
  let cluster: TestCluster;
  let batchId: string | undefined;
  beforeAll(async () => { cluster = await startTestWorkers('sidecar-exit'); });
  afterAll(async () => {
    if (batchId) await cleanUpBatch(cluster.client, batchId);
    await cluster?.stop();
  });

  it('with 0 leaves the row as it is; with 3 the row is scored and notes the code and the log tail', async () => {
    const dataset = writeDataset({
      ...task('clean', 'sleep 4; exit 0'),
      ...task('crash', 'sleep 4; echo last-words-of-side; exit 3'),
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-sexit-')), taskQueue: cluster.taskQueue, client: cluster.client, concurrency: 2 });
    batchId = handle.batchId;
    const rows = new Map((await handle.wait()).rows.map((r) => [r.task_id, r]));
    const clean = rows.get('clean')!;
    const crash = rows.get('crash')!;
    expect(clean, clean.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(clean.notes).toBeUndefined();
    expect(crash, crash.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(crash.notes).toHaveLength(1);
    expect(crash.notes![0]).toContain('sidecar "side" exited during the rollout (exit code 3)');
    expect(crash.notes![0]).toContain('last-words-of-side');
  }, 240_000);
});
