import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider, LABEL_BATCH, type SandboxProvider } from '../../src/sandbox/index.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { ownNamespace, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { waitUntil } from '../helpers/worker-process.ts';

// 32 concurrent episodes of examples/hello (issue 23, Tests: "32 concurrent episodes"), the same file on both
// sandboxes, where the behaviour must be equal: every row scores 1 and nothing of the batch is left behind.

const examples = join(import.meta.dirname, '..', '..', 'examples');
const N = 32;

interface Sandbox {
  name: 'docker' | 'kubernetes';
  provider(): Promise<SandboxProvider>;
  /** Waits (bounded) until nothing of the batch is left. */
  nothingLeft(batchId: string): Promise<void>;
  done(): Promise<void>;
}

function dockerSandbox(): Sandbox {
  return {
    name: 'docker',
    provider: () => Promise.resolve(new DockerSandboxProvider(new Docker())),
    nothingLeft: (batchId) => noContainersLeft(`${LABEL_BATCH}=${batchId}`, 60_000),
    done: () => Promise.resolve(),
  };
}

function kubernetesSandbox(): Sandbox {
  let cluster: LocalCluster | undefined;
  let ns: OwnNamespace | undefined;
  return {
    name: 'kubernetes',
    async provider() {
      cluster = await useLocalCluster();
      ns = await ownNamespace(cluster.core, 'concurrent');
      return new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace: ns.name, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    },
    nothingLeft: () => waitUntil(async () => (await ns!.pods()).length === 0, 60_000, `no pod left in ${ns!.name}`),
    async done() {
      await ns?.remove();
      await cluster?.release();
    },
  };
}

describe.each([dockerSandbox(), kubernetesSandbox()])('$name: 32 concurrent episodes of examples/hello', (sandbox) => {
  let workers: TestCluster;

  beforeAll(async () => {
    workers = await startTestWorkers(`concurrent-${sandbox.name}`, { provider: await sandbox.provider() });
  }, FIRST_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await workers?.stop();
    await sandbox.done();
  }, 180_000);

  it(`all ${N} score 1 and nothing is left`, async () => {
    const handle = await startBatch({
      dataset: join(examples, 'hello'), agent: 'oracle', repeats: N, concurrency: N,
      resultsDir: mkdtempSync(join(tmpdir(), `berth-concurrent-${sandbox.name}-`)), taskQueue: workers.taskQueue, client: workers.client,
    });
    const summary = await handle.wait();
    expect(summary.rows).toHaveLength(N);
    expect(summary.rows.filter((r) => r.reward === 1 && !r.mask_sample)).toHaveLength(N);
    expect(new Set(summary.rows.map((r) => r.repeat)).size).toBe(N);
    await sandbox.nothingLeft(handle.batchId);
  }, 900_000);
});
