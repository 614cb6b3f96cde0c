import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';

// docs/design.md section 7, Identity and idempotence: Temporal Reset is supported to before the seed.
describe('Temporal Reset of a finished episode', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('reset'); });
  afterAll(async () => { await cluster?.stop(); });

  it('re-runs from the first workflow task: a new sandbox, the same row, nothing left behind', async () => {
    const handle = await startBatch({ dataset: writeDataset(echoTask('again')), resultsDir: mkdtempSync(join(tmpdir(), 'berth-reset-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const first = (await handle.wait()).rows[0]!;
    const episode = cluster.client.workflow.getHandle(first.workflow_id);
    const history = await episode.fetchHistory();
    const firstTask = history.events!.find((e) => e.workflowTaskCompletedEventAttributes)!;
    const { runId } = await cluster.client.workflowService.resetWorkflowExecution({
      namespace: 'default', workflowExecution: { workflowId: first.workflow_id, runId: first.run_id },
      workflowTaskFinishEventId: firstTask.eventId, reason: 'test: reset before the seed', requestId: `${first.run_id}-reset`,
    });
    const again = await cluster.client.workflow.getHandle<() => Promise<ResultRow>>(first.workflow_id, runId!).result();
    expect(again.run_id).not.toBe(first.run_id);
    const pick = (r: ResultRow) => ({ reward: r.reward, turns: r.turns, failure_kind: r.failure_kind, mask_sample: r.mask_sample });
    expect(pick(again)).toEqual(pick(first));
    await noContainersLeft(`berth.workflow=${first.workflow_id}`);
  });
});
