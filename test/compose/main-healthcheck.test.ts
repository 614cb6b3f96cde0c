// main's own Compose healthcheck is kept and awaited (issue 22; docs/design.md section 7, Images: for Compose the task's
// own healthcheck on main is the task's declaration and runs): after Berth seeds main and before the agent starts,
// and a sidecar that `depends_on: {main: {condition: service_healthy}}` starts after it, as `up --wait` orders it.
// Harbor 0.25 runs `docker compose up --detach --wait`, so its agent starts once main is healthy: it scores 1.
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, cleanUpBatch, composeFolder, groupSpec, sh, testDriver, uniqueProject } from './helpers.ts';

const docker = new Docker();
/** main's own healthcheck waits for /tmp/ready (made by `mainCommand`, else by the test); a sidecar waits for main. */
const healthyMain = (mainCommand?: string) => `
services:
  main:${mainCommand ? `\n    command: ${mainCommand}` : ''}
    healthcheck:
      test: ["CMD", "test", "-f", "/tmp/ready"]
      interval: 1s
      retries: 60
  side:
    image: ${BASE_IMAGE}
    command: ["sleep", "infinity"]
    depends_on:
      main:
        condition: service_healthy
`;

describe('a group whose main has its own healthcheck and a sidecar waiting for it', () => {
  const driver = testDriver();
  const project = uniqueProject('mainhealth');
  afterAll(() => driver.remove({ name: project, kind: 'group' }));

  it('seeds main first, awaits main healthy, then starts the dependent sidecar', async () => {
    let seededAt = 0;
    const r = await driver.createOrAdoptGroup(groupSpec(project, composeFolder(healthyMain()), {
      afterMain: async (main) => {
        // What main's seed starts (its entrypoint) is what the healthcheck probes.
        await new Promise((res) => setTimeout(res, 2000));
        expect((await sh(main, 'touch /tmp/ready')).exitCode).toBe(0);
        seededAt = Date.now();
      },
    }));
    const main = await docker.getContainer(r.group.services.main!.containerId).inspect();
    const side = await docker.getContainer(r.group.services.side!.containerId).inspect();
    expect(main.State.Health?.Status).toBe('healthy');
    expect(main.Config.Healthcheck?.Test).toEqual(['CMD', 'test', '-f', '/tmp/ready']);
    expect(side.State.Running).toBe(true);
    expect(Date.parse(side.State.StartedAt)).toBeGreaterThanOrEqual(seededAt - 50);
  }, 120_000);
});

describe('the issue\'s task: the agent needs what main\'s healthcheck waits for', () => {
  let cluster: TestCluster;
  let batchId: string | undefined;
  beforeAll(async () => { cluster = await startTestWorkers('main-healthcheck'); });
  afterAll(async () => {
    if (batchId) await cleanUpBatch(cluster.client, batchId);
    await cluster?.stop();
  });

  it('starts the agent only once main is healthy: reward 1, as under Harbor', async () => {
    const dataset = writeDataset({
      'slowmain/task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\nworkdir = "/app"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n`,
      'slowmain/instruction.md': 'Use the server main starts.\n',
      'slowmain/environment/docker-compose.yaml': healthyMain('["sh", "-c", "sleep 4; touch /tmp/ready; exec sleep infinity"]'),
      'slowmain/solution/solve.sh': '#!/bin/bash\nif [ -f /tmp/ready ]; then echo ready > /app/out; else echo early > /app/out; fi\n',
      'slowmain/tests/test.sh': '#!/bin/bash\n[ "$(cat /app/out)" = ready ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-mainhc-')), taskQueue: cluster.taskQueue, client: cluster.client });
    batchId = handle.batchId;
    const [row] = (await handle.wait()).rows;
    expect(row, row!.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false });
  }, 240_000);
});
