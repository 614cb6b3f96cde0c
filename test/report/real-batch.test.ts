import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { reportCommand } from '../../src/cli/report.ts';
import { episodePagePath } from '../../src/client/report-paths.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';

const examples = join(import.meta.dirname, '..', '..', 'examples');

describe('berth report over a real batch (real Temporal, real Docker)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('report'); });
  afterAll(async () => { await cluster?.stop(); });

  it('reads the collected rows and takes the dataset and agent from the batch workflow', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-report-real-'));
    const handle = await startBatch({
      dataset: join(examples, 'hello'), agent: 'oracle', repeats: 2, resultsDir, taskQueue: cluster.taskQueue, client: cluster.client,
      batchId: `report-check-${Date.now()}`,
    });
    await handle.wait();
    const path = await reportCommand(handle.batchId, { results: resultsDir });
    expect(path).toBe(join(resultsDir, 'report.html'));
    const text = readFileSync(path, 'utf8').replace(/<style>[\s\S]*?<\/style>/, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(text).toContain(`Batch ${handle.batchId}`);
    expect(text).toContain('dataset hello · agent oracle');
    expect(text).toMatch(/episodes 2 .*scored 2 .*masked 0 .*failed 0 .*skipped tasks 0 .*mean reward 1 /);
    expect(text).toMatch(/hello 1 1 2 2 1 1/);
    expect(text).toMatch(/phase episodes mean \(s\) median \(s\) max \(s\) .*agent 2 .*verify 2 /);
    // Each real row has its page: the oracle's trajectory (the instruction, its command and output) and test.sh's reward.
    const row = (await handle.collect()).rows[0]!;
    const episode = readFileSync(join(resultsDir, episodePagePath(row)), 'utf8');
    expect(episode.match(/<article class="step/g)?.length).toBeGreaterThanOrEqual(2);
    expect(episode).toContain('src-user');
    expect(episode).toMatch(/<div class="reward-files">[\s\S]*reward\.txt[\s\S]*>1\n?</);
  });
});
