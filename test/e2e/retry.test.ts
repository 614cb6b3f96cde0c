import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { BASE_TOML, echoTask, writeDataset } from '../helpers/tasks.ts';

describe('retrying masked episodes (docs/design.md section 3, Retry)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('retry'); });
  afterAll(async () => { await cluster?.stop(); });

  it('a masked episode retried after the cause is fixed scores, and the newest attempt is reported', async () => {
    delete process.env.BERTH_RETRY_TOKEN;
    const dataset = writeDataset({
      ...echoTask('fine'),
      ...echoTask('needs-token', 'ok', `${BASE_TOML}[environment.env]\nTOKEN = "\${BERTH_RETRY_TOKEN}"\n`),
    });
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-results-'));
    const handle = await startBatch({ dataset, agent: 'oracle', resultsDir, taskQueue: cluster.taskQueue, client: cluster.client });
    const first = await handle.wait();
    const byTask = Object.fromEntries(first.rows.map((r) => [r.task_id, r]));
    expect(byTask.fine).toMatchObject({ reward: 1, attempt: 1 });
    expect(byTask['needs-token']).toMatchObject({ mask_sample: true, failure_kind: 'harbor:seed_failed', attempt: 1 });
    expect(byTask['needs-token']!.failure_reason).toContain('BERTH_RETRY_TOKEN');

    process.env.BERTH_RETRY_TOKEN = 'set-now';
    const second = await handle.retry({ masked: true });
    expect(second.retried).toEqual([`berth/${handle.batchId}/needs-token/1~a2`]);
    const rows = readFileSync(join(resultsDir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.task_id, r.attempt, r.reward])).toEqual([['fine', 1, 1], ['needs-token', 2, 1]]);
    expect(JSON.parse(readFileSync(join(resultsDir, 'metrics.json'), 'utf8'))).toMatchObject({ mean_reward: 1, scored: 2, masked: 0 });
    expect(rows[1].failure_reason).toBeNull();
  });
});
