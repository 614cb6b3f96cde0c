// Compose groups under failure (issue 13, Tests: chaos): a worker killed during the seed, a sidecar
// removed mid-turn, and the janitor after a crash. docs/design.md section 3 (Surviving restarts, Sandbox loss).
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { DockerSandboxProvider } from '../../src/sandbox/index.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';
import { BASE_IMAGE, cleanUpBatch, composeFolder, execOk, groupLeftovers, groupSpec, testDriver, uniqueProject } from './helpers.ts';

const docker = new Docker();

/** A Compose task whose sidecar turns healthy only after `readyAfter` seconds; the oracle's solve.sh is `solve`. */
function composeTask(id: string, solve: string, readyAfter: number): Record<string, string> {
  return {
    [`${id}/task.toml`]: `[environment]\ndocker_image = "${BASE_IMAGE}"\nworkdir = "/app"\n[agent]\ntimeout_sec = 300\n[verifier]\ntimeout_sec = 60\n`,
    [`${id}/instruction.md`]: 'Ask the sidecar.\n',
    [`${id}/environment/docker-compose.yaml`]: `services:
  main:
    depends_on:
      side:
        condition: service_healthy
  side:
    image: ${BASE_IMAGE}
    command: ["sh", "-c", "sleep ${readyAfter}; touch /tmp/ready; exec sleep infinity"]
    healthcheck:
      test: ["CMD", "test", "-e", "/tmp/ready"]
      interval: 1s
      retries: 120
`,
    [`${id}/solution/solve.sh`]: `#!/bin/bash\n${solve}\n`,
    [`${id}/tests/test.sh`]: '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
  };
}

async function episodeContainers(workflowId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`berth.workflow=${workflowId}`] } });
}

describe('a worker killed with -9 during a Compose seed', () => {
  const suffix = `ccrash-${randomBytes(3).toString('hex')}`;
  const env = { BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix, BERTH_HEARTBEAT_TIMEOUT_SEC: '6' };
  const workers: WorkerProcess[] = [];
  let connection: Connection;
  let batchId: string | undefined;
  afterAll(async () => {
    for (const w of workers) await w.stop();
    if (batchId) await cleanUpBatch(new Client({ connection }), batchId);
    await connection?.close();
  });

  it('the new worker adopts or replaces the project, never a second one, and the episode scores', async () => {
    connection = await Connection.connect({ address: '127.0.0.1:7233' });
    const client = new Client({ connection });
    workers.push(startWorkerProcess(env));
    const dataset = writeDataset(composeTask('slowside', 'true', 8));
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-ccrash-')), taskQueue: env.BERTH_TASK_QUEUE, client });
    batchId = handle.batchId;
    const workflowId = `berth/${handle.batchId}/slowside/1`;
    // The seed is inside `up --wait`: the sidecar runs, main is not created yet.
    await waitUntil(async () => (await episodeContainers(workflowId)).length > 0, 120_000, 'the group to start coming up');
    workers[0]!.kill9();
    workers.push(startWorkerProcess(env));

    const projects = new Set<string>();
    let most = 0;
    let stop = false;
    const watching = (async () => {
      while (!stop) {
        const cs = await episodeContainers(workflowId);
        for (const c of cs) projects.add(c.Labels['berth.group'] ?? '?');
        const perService = new Map<string, number>();
        for (const c of cs) perService.set(c.Labels['com.docker.compose.service']!, (perService.get(c.Labels['com.docker.compose.service']!) ?? 0) + 1);
        most = Math.max(most, ...perService.values(), 0);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const summary = await handle.wait();
    stop = true;
    await watching;
    expect(summary.rows[0], summary.rows[0]!.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false });
    expect(projects.size).toBe(1);
    expect(most).toBe(1);
    await groupLeftovers(`berth.workflow=${workflowId}`);
  }, 300_000);
});

// Issue 22 (a sidecar that exits on its own is not a lost sandbox): only a container that disappears masks the row. A
// sidecar SIGKILLed from outside (137) still exists, its log and the episode's state intact, and Berth cannot tell
// an operator's kill from one the agent provoked (an OOM kill, a crash it caused): it exited non-zero, so the row
// is scored with a note naming the code and the log tail.
describe('a sidecar removed or killed from outside mid-turn', () => {
  let cluster: TestCluster;
  let batchId: string | undefined;
  beforeAll(async () => { cluster = await startTestWorkers('sidecar-loss'); });
  afterAll(async () => {
    if (batchId) await cleanUpBatch(cluster.client, batchId);
    await cluster?.stop();
  });

  it('a removed sidecar masks the row as provider_unavailable within 30 s; a killed one is a note on a scored row', async () => {
    // The agent works until the sidecar's name stops resolving (a stopped or removed container leaves the network's DNS).
    const untilGone = 'touch /app/started\nfor i in $(seq 240); do getent hosts side >/dev/null || break; sleep 0.5; done';
    const dataset = writeDataset({
      ...composeTask('removed', 'touch /app/started\nsleep 240', 0),
      ...composeTask('killed', untilGone, 0),
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-sloss-')), taskQueue: cluster.taskQueue, client: cluster.client, concurrency: 2 });
    batchId = handle.batchId;
    const sidecarOf = async (task: string): Promise<string | undefined> => {
      const cs = await episodeContainers(`berth/${handle.batchId}/${task}/1`);
      const main = cs.find((c) => c.Labels['com.docker.compose.service'] === 'main');
      const side = cs.find((c) => c.Labels['com.docker.compose.service'] === 'side')?.Id;
      return main && side && (await execOk(main.Id, ['test', '-f', '/app/started'])) ? side : undefined;
    };
    const sidecars: Record<string, string> = {};
    await waitUntil(async () => {
      for (const t of ['removed', 'killed']) sidecars[t] ??= (await sidecarOf(t))!;
      return Boolean(sidecars.removed && sidecars.killed);
    }, 120_000, 'both agent processes');
    const goneAt = Date.now();
    await docker.getContainer(sidecars.removed!).remove({ force: true });
    await docker.getContainer(sidecars.killed!).kill();
    const rows = new Map((await handle.wait()).rows.map((r) => [r.task_id, r]));
    expect((Date.now() - goneAt) / 1000).toBeLessThan(30);
    expect(rows.get('removed')).toMatchObject({ mask_sample: true, reward: null, failure_kind: 'provider_unavailable' });
    expect(rows.get('removed')!.failure_reason).toContain('sidecar "side" was removed during the rollout');
    const killed = rows.get('killed')!;
    expect(killed, killed.failure_reason ?? '').toMatchObject({ mask_sample: false, reward: 1, failure_kind: null });
    expect(killed.notes?.join('\n')).toContain('sidecar "side" exited during the rollout (exit code 137');
    for (const t of rows.keys()) await groupLeftovers(`berth.workflow=berth/${handle.batchId}/${t}/1`);
  });
});

describe('the janitor after a crash', () => {
  it('removes a dead episode\'s whole group (containers, network, volumes) and keeps a live one', async () => {
    const driver = testDriver();
    const folder = composeFolder(`services:\n  main:\n    volumes: ["data:/data"]\n  side:\n    image: ${BASE_IMAGE}\n    command: ["sleep", "infinity"]\nvolumes:\n  data: {}\n`);
    const dead = uniqueProject('janitor-dead');
    const live = uniqueProject('janitor-live');
    await Promise.all([dead, live].map((p) => driver.createOrAdoptGroup(groupSpec(p, folder))));
    const wf = (p: string) => `berth/test/${p}`;
    const provider = new DockerSandboxProvider();
    const report = await provider.janitor({ isLive: async (w) => w !== wf(dead) });
    expect(report.removed).toContainEqual({ name: dead, workflowId: wf(dead) });
    expect(report.kept).toContainEqual({ name: live, workflowId: wf(live), reason: 'episode is running' });
    await groupLeftovers(`berth.group=${dead}`);
    expect((await docker.listContainers({ all: true, filters: { label: [`berth.group=${live}`] } })).length).toBe(2);
    await driver.remove({ name: live, kind: 'group' });
  });
});
