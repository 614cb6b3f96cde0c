import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { recordHistory } from '../helpers/histories.ts';

const examples = join(import.meta.dirname, '..', '..', 'examples');

describe('hello episode, end to end (real Temporal, real Docker)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('hello'); });
  afterAll(async () => { await cluster?.stop(); });

  it('the oracle scores 1 and the sandbox is removed', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-results-'));
    const handle = await startBatch({
      dataset: join(examples, 'hello'), agent: 'oracle', resultsDir, taskQueue: cluster.taskQueue,
      client: cluster.client,
    });
    const summary = await handle.wait();
    expect(summary.rows).toHaveLength(1);
    const row = summary.rows[0]!;
    expect(row).toMatchObject({ task_id: 'hello', repeat: 1, reward: 1, mask_sample: false, failure_kind: null });
    expect(row.workflow_id).toBe(`berth/${handle.batchId}/hello/1`);
    const onDisk = readFileSync(join(resultsDir, 'rollouts.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(onDisk).toEqual([row]);
    expect(JSON.parse(readFileSync(join(resultsDir, 'metrics.json'), 'utf8'))).toMatchObject({ batch_id: handle.batchId, dataset: 'hello', agent: 'oracle', mean_reward: 1, scored: 1, masked: 0 });
    await recordHistory(cluster.client, row.workflow_id, 'episode-hello-real');
    await noContainersLeft(`berth.workflow=${row.workflow_id}`);
  });

  it('nop leaves the greeting unwritten and scores 0', async () => {
    const handle = await startBatch({
      dataset: join(examples, 'hello'), agent: 'nop', resultsDir: mkdtempSync(join(tmpdir(), 'berth-results-')),
      taskQueue: cluster.taskQueue,
      client: cluster.client,
    });
    const summary = await handle.wait();
    expect(summary.rows[0]).toMatchObject({ task_id: 'hello', reward: 0, mask_sample: false });
  });
});
