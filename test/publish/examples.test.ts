// Issue 37, publishing: Harbor 0.25 runs `berth publish examples OUT --harbor` with its oracle, and every task
// scores what Berth's oracle scores on the original (hello; compose-hello, a Compose task; arithmetic, a template
// whose rows grade with a Python verifier and answer.md).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { berth } from '../helpers/cli.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { harborOracleRewards } from '../helpers/harbor-oracle.ts';

const examples = join(import.meta.dirname, '..', '..', 'examples');

describe('the published copy of examples/ under Harbor 0.25', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('publish-examples'); });
  afterAll(async () => { await cluster?.stop(); });

  it('every task scores under Harbor\'s oracle what it scores under Berth\'s', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'berth-published-')), 'examples');
    const pub = await berth(['publish', examples, out, '--harbor', '--json']);
    expect(pub.code, pub.stderr).toBe(0);
    const published = JSON.parse(pub.stdout) as { written: string[]; refused: unknown[] };
    expect(published.written.sort()).toEqual(['add', 'compose-hello', 'hello', 'multiply', 'subtract']);

    const handle = await startBatch({ dataset: examples, agent: 'oracle', concurrency: 2, resultsDir: mkdtempSync(join(tmpdir(), 'berth-examples-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const berthRewards = Object.fromEntries((await handle.wait()).rows.map((r) => [r.task_id, r.reward]));
    expect(berthRewards).toEqual({ 'add': 1, 'compose-hello': 1, 'hello': 1, 'multiply': 1, 'subtract': 1 });
    // Harbor 0.25, `harbor run -p OUT -a oracle -n 2`: it reported reward 1 for each of the five trials.
    expect(await harborOracleRewards(out, 2)).toEqual(berthRewards);
  }, 900_000);
});
