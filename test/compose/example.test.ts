// examples/compose-hello end to end (real Temporal, real Docker, real Compose): a healthy-gated sidecar
// built from the local base image, reached by name, with a collect hook in the sidecar.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { groupLeftovers } from './helpers.ts';

const examples = join(import.meta.dirname, '..', '..', 'examples');

describe('examples/compose-hello', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('compose-hello'); });
  afterAll(async () => { await cluster?.stop(); });

  it('the oracle scores 1, and the whole group is removed', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-results-'));
    const handle = await startBatch({ dataset: join(examples, 'compose-hello'), agent: 'oracle', resultsDir, taskQueue: cluster.taskQueue, client: cluster.client });
    const summary = await handle.wait();
    const row = summary.rows[0]!;
    expect(row, row.failure_reason ?? '').toMatchObject({ task_id: 'compose-hello', reward: 1, mask_sample: false, failure_kind: null });
    await groupLeftovers(`berth.workflow=${row.workflow_id}`, []);
  });

  it('nop scores 0 (the sidecar was never asked)', async () => {
    const handle = await startBatch({ dataset: join(examples, 'compose-hello'), agent: 'nop', resultsDir: mkdtempSync(join(tmpdir(), 'berth-results-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const row = (await handle.wait()).rows[0]!;
    expect(row).toMatchObject({ reward: 0, mask_sample: false });
    const log = readFileSync(join(row.logs_dir!, 'turn-1', 'verifier', 'test-stdout.txt'), 'utf8');
    expect(log).toContain('sidecar log:');
    await groupLeftovers(`berth.workflow=${row.workflow_id}`, []);
  });
});
