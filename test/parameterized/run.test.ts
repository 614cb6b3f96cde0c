// Issue 37: a parameterized dataset runs with Berth's oracle (each row a task with its own digest; task_data.py
// checked first, in a container), a retry reruns a row, a regrade after the template's verifier changed grades every
// row again, and
// Harbor 0.25 runs the `berth publish --harbor` copy with its oracle to the same reward per task.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { berth } from '../helpers/cli.ts';
import { harborOracleRewards } from '../helpers/harbor-oracle.ts';
import { parameterizedDataset, VERIFIER_V1 } from '../helpers/parameterized.ts';
import { ensurePydanticImage } from '../helpers/pydantic-image.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';

describe('a parameterized dataset with Berth\'s oracle, and its published copy under Harbor', () => {
  let cluster: TestCluster;
  let image: string;
  const prev = process.env.BERTH_TASK_DATA_IMAGE;
  beforeAll(async () => {
    image = await ensurePydanticImage();
    process.env.BERTH_TASK_DATA_IMAGE = image;
    cluster = await startTestWorkers('parameterized');
  }, 360_000);
  afterAll(async () => {
    await cluster?.stop();
    if (prev === undefined) delete process.env.BERTH_TASK_DATA_IMAGE;
    else process.env.BERTH_TASK_DATA_IMAGE = prev;
  });

  it('each row runs as its own task, the rejected row is skipped, a retry reruns a row, a regrade reads the edited template', async () => {
    const root = parameterizedDataset();
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-param-'));
    const handle = await startBatch({ dataset: root, agent: 'oracle', keepFinalState: true, resultsDir, taskQueue: cluster.taskQueue, client: cluster.client });
    expect(handle.skipped.map((s) => [s.task_id, s.reason.includes('rejects task "untyped" (answer: Input should be a valid integer')])).toEqual([['untyped', true]]);
    const first = await handle.wait();
    const rewards = Object.fromEntries(first.rows.map((r) => [r.task_id, r.reward]));
    expect(rewards).toEqual({ right: 1, close: 0.5, wrong: 0 });
    expect(first.rows.find((r) => r.task_id === 'right')!.verifier_rewards).toEqual({ reward: 1, exact: 1 });
    expect(new Set(first.rows.map((r) => r.digest)).size).toBe(3);

    // A retry loads the rendered task again by path, at the batch's digest.
    const retried = await handle.retry({ taskIds: ['close'] });
    expect(retried.rows.filter((r) => r.task_id === 'close').map((r) => [r.reward, r.attempt])).toEqual([[0.5, 2]]);

    // The template's verifier changed to give less partial credit: the regrade renders each row again.
    writeFileSync(join(root, 'tests/verifier.py'), VERIFIER_V1.replace('0.5 if close', '0.25 if close'));
    const again = await handle.regrade();
    const regraded = Object.fromEntries(again.rows.map((r) => [r.task_id, [r.reward, r.attempt]]));
    expect(regraded).toEqual({ right: [1, 2], close: [0.25, 3], wrong: [0, 2] });
  }, 420_000);

  it('Harbor\'s oracle scores the published copy as Berth scores the original, task by task', async () => {
    const root = parameterizedDataset();
    const out = join(mkdtempSync(join(tmpdir(), 'berth-published-')), 'harbor');
    const pub = await berth(['publish', root, out, '--harbor', '--task-data-image', image, '--json']);
    // The rejected row is listed (exit 1) and the others are written.
    expect(pub.code, pub.stderr).toBe(1);
    const published = JSON.parse(pub.stdout) as { written: string[]; refused: Array<{ task_id: string; reason: string }> };
    expect(published.written.sort()).toEqual(['close', 'right', 'wrong']);
    expect(published.refused.map((r) => r.task_id)).toEqual(['untyped']);

    const handle = await startBatch({ dataset: root, agent: 'oracle', resultsDir: mkdtempSync(join(tmpdir(), 'berth-param-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const berthRewards = Object.fromEntries((await handle.wait()).rows.map((r) => [r.task_id, r.reward]));
    // Harbor 0.25, `harbor run -p OUT -a oracle`: the shim grades in tests/, solve.sh writes answer.md.
    expect(await harborOracleRewards(out, 3)).toEqual(berthRewards);
    expect(berthRewards).toEqual({ right: 1, close: 0.5, wrong: 0 });
  }, 600_000);
});
