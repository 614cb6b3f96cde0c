import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';

// DESIGN.md section 7, Images: Berth runs a built image's ENTRYPOINT beside the keep-alive; non-zero at seed
// fails the seed, death during the rollout masks the episode as harbor:entrypoint_failed.
const task = (id: string, entrypoint: string) => ({
  [`${id}/task.toml`]: '[environment]\nworkdir = "/app"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n',
  [`${id}/environment/Dockerfile`]: 'FROM berth-base:bookworm\nCOPY --chmod=755 entry.sh /entry.sh\nENTRYPOINT ["/entry.sh"]\n',
  [`${id}/environment/entry.sh`]: `#!/bin/bash\n${entrypoint}\n`,
  [`${id}/instruction.md`]: 'wait\n',
  [`${id}/solution/solve.sh`]: '#!/bin/bash\nsleep 3\n',
  [`${id}/tests/test.sh`]: '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
});

describe('an image entrypoint', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('entrypoint'); });
  afterAll(async () => { await cluster?.stop(); });

  it('that keeps running scores; one that dies mid-rollout masks; one that fails at seed masks as a seed failure', async () => {
    const dataset = writeDataset({
      ...task('steady', 'echo up > /tmp/up; exec sleep infinity'),
      ...task('dies', 'sleep 1.5; exit 3'),
      ...task('broken', 'echo cannot start >&2; exit 5'),
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-ep-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const rows = Object.fromEntries((await handle.wait()).rows.map((r) => [r.task_id, r]));
    expect(rows.steady).toMatchObject({ reward: 1, mask_sample: false });
    expect(rows.dies).toMatchObject({ mask_sample: true, failure_kind: 'harbor:entrypoint_failed' });
    expect(rows.dies!.failure_reason).toContain('exited with code 3');
    expect(rows.broken).toMatchObject({ mask_sample: true, failure_kind: 'harbor:entrypoint_failed' });
  });
});
