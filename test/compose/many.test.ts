// 48 concurrent Compose episodes on one host (issue 13, Tests): every one gets its own network, on a
// subnet Berth allocates, though the engine's default pools hold about 30 (measured on this kind of machine:
// Harbor fails past that with "could not find an available, non-overlapping IPv4 address pool").
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { BASE_IMAGE, cleanUpBatch, execOk, groupLeftovers } from './helpers.ts';

const N = 48;
const docker = new Docker();

// Each episode's agent waits for the test's go-ahead, so all 48 groups are up at the same moment.
const dataset = () => writeDataset({
  'pair/task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\nworkdir = "/app"\n[agent]\ntimeout_sec = 600\n[verifier]\ntimeout_sec = 60\n`,
  'pair/instruction.md': 'Ask the sidecar, when told to.\n',
  'pair/environment/docker-compose.yaml': `services:\n  side:\n    image: ${BASE_IMAGE}\n    command: ["sh", "-c", "echo pong > /srv/answer; cd /srv && exec python3 -m http.server 8000"]\n`,
  'pair/solution/solve.sh': '#!/bin/bash\ntouch /app/waiting\nfor i in $(seq 1 600); do [ -e /app/go ] && break; sleep 1; done\npython3 -c "import urllib.request; print(urllib.request.urlopen(\'http://side:8000/answer\').read().decode().strip())" > /app/answer\n',
  'pair/tests/test.sh': '#!/bin/bash\n[ "$(cat /app/answer)" = pong ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
});

describe(`${N} concurrent Compose episodes on one host`, () => {
  let cluster: TestCluster;
  let batchId: string | undefined;
  beforeAll(async () => {
    process.env.BERTH_WORKER_SLOTS = String(N);
    cluster = await startTestWorkers('compose-many');
  });
  afterAll(async () => {
    if (batchId) await cleanUpBatch(cluster.client, batchId);
    await cluster?.stop();
  });

  it('all finish with reward 1: no address-pool or name failure', async () => {
    const engineDefault = (await docker.info() as { DefaultAddressPools?: unknown }).DefaultAddressPools;
    const handle = await startBatch({
      dataset: dataset(), agent: 'oracle', repeats: N, concurrency: N, resultsDir: mkdtempSync(join(tmpdir(), 'berth-many-')),
      taskQueue: cluster.taskQueue, client: cluster.client,
    });
    batchId = handle.batchId;
    const label = `berth.batch=${handle.batchId}`;
    const started = Date.now();
    let waiting: Docker.ContainerInfo[] = [];
    await waitUntil(async () => {
      const mains = await docker.listContainers({ filters: { label: [label, 'com.docker.compose.service=main'] } });
      const checks = await Promise.all(mains.map(async (c) => ((await execOk(c.Id, ['test', '-e', '/app/waiting'])) ? c : null)));
      waiting = checks.filter((c): c is Docker.ContainerInfo => c !== null);
      return waiting.length === N;
    }, 600_000, `all ${N} agents waiting in their groups`);
    console.log(`${N} groups up and their agents waiting after ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const networks = await docker.listNetworks({ filters: { label: [label] } });
    expect(networks).toHaveLength(N);
    const subnets = new Set(networks.map((n) => (n.IPAM?.Config?.[0]?.Subnet as string | undefined) ?? n.Id));
    expect(subnets.size).toBe(N);
    if (!engineDefault) expect([...subnets].every((s) => s.startsWith('10.213.'))).toBe(true);

    for (const c of waiting) expect(await execOk(c.Id, ['touch', '/app/go'])).toBe(true);
    const summary = await handle.wait();
    expect(summary.rows).toHaveLength(N);
    const bad = summary.rows.filter((r) => r.reward !== 1).map((r) => `${r.repeat}: ${r.failure_kind} ${r.failure_reason}`);
    expect(bad).toEqual([]);
    await groupLeftovers(label, [], 120_000);
  }, 900_000);
});
