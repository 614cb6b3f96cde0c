import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';

// docs/design.md section 7, Images: Berth runs a built image's ENTRYPOINT beside the keep-alive; non-zero at seed
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

// Task Folder Format, `docker_image` row: beside a pull-mode environment/Dockerfile, the ENTRYPOINT and HEALTHCHECK
// of its FROM image run (not those of docker_image, which has no record of its own). Two local images made here, each
// marking when its entrypoint or healthcheck ran; the verifier reports which ones did.
describe('docker_image beside a pull-mode Dockerfile whose FROM differs (issue 22)', () => {
  let cluster: TestCluster;
  const tag = (role: string) => `berth-test-h22a-${role}-${randomBytes(4).toString('hex')}`;
  const named = tag('named');
  const from = tag('from');
  const image = (ref: string, mark: string) => execFileSync('docker', ['build', '-q', '-t', ref, '-'], {
    input: `FROM berth-base:bookworm\nENTRYPOINT ["/bin/sh", "-c", "touch /tmp/${mark}-entrypoint; exec \\"$@\\"", "--"]\n` +
      `HEALTHCHECK --interval=1s --retries=3 CMD touch /tmp/${mark}-healthcheck\n`,
  });
  beforeAll(async () => {
    image(named, 'named');
    image(from, 'from');
    cluster = await startTestWorkers('entrypoint-from');
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
    execFileSync('docker', ['image', 'rm', '-f', named, from]);
  });

  it('runs the FROM image\'s entrypoint and healthcheck, and neither of docker_image\'s', async () => {
    const dataset = writeDataset({
      'p/task.toml': `[environment]\ndocker_image = "${named}"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n`,
      'p/environment/Dockerfile': `FROM ${from}\nWORKDIR /app\n`,
      'p/instruction.md': 'nothing\n',
      'p/solution/solve.sh': '#!/bin/bash\ntrue\n',
      'p/tests/test.sh': '#!/bin/bash\nprintf \'{"from_entrypoint": %d, "from_healthcheck": %d, "named_entrypoint": %d, "named_healthcheck": %d, "reward": 1}\' ' +
        '$([ -e /tmp/from-entrypoint ] && echo 1 || echo 0) $([ -e /tmp/from-healthcheck ] && echo 1 || echo 0) ' +
        '$([ -e /tmp/named-entrypoint ] && echo 1 || echo 0) $([ -e /tmp/named-healthcheck ] && echo 1 || echo 0) > /logs/verifier/reward.json\n',
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-ep-from-')), taskQueue: cluster.taskQueue, client: cluster.client });
    const [row] = (await handle.wait()).rows;
    expect(handle.skipped).toEqual([]);
    expect(row, row?.failure_reason ?? '').toMatchObject({ mask_sample: false, failure_kind: null });
    expect(row!.verifier_rewards).toEqual({ reward: 1, from_entrypoint: 1, from_healthcheck: 1, named_entrypoint: 0, named_healthcheck: 0 });
  }, 180_000);
});
