import { Watch, type V1Pod } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivityDeps, releaseActivityDeps } from '../../src/activities/deps.ts';
import { startBatch } from '../../src/client/batch.ts';
import { temporalAddress } from '../../src/config/temporal.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider, type SandboxSpec } from '../../src/sandbox/index.ts';
import { createWorkers } from '../../src/worker.ts';
import { ownNamespace, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';

// Two workers on one cluster (issue 23, "Scheduling and slots": any number of workers drive one cluster with no
// per-host queue, and [kubernetes].max_pods bounds a batch; docs/kubernetes.md, Sandbox queues on Kubernetes). Each
// worker has its own provider, activities and slots object: what they share is the cluster's sandbox queue and the
// slot Leases in the cluster. A watch on the namespace's pods sees every pod come and go.

const MAX_PODS = 2;
const EPISODES = 8;

/** The Kubernetes provider, counting the sandboxes this worker seeded. */
class CountingProvider extends KubernetesSandboxProvider {
  seeds = 0;
  override seed(spec: SandboxSpec) {
    this.seeds++;
    return super.seed(spec);
  }
}

describe('two workers on one cluster share its sandbox queue and its max_pods', () => {
  let cluster: LocalCluster;
  let ns: OwnNamespace;
  const providers: CountingProvider[] = [];
  const stops: Array<() => Promise<void>> = [];
  let client: Client;
  let taskQueue = '';

  beforeAll(async () => {
    cluster = await useLocalCluster();
    ns = await ownNamespace(cluster.core, 'shared-queue');
    const { address } = temporalAddress();
    const suffix = `k8s-shared-${randomBytes(3).toString('hex')}`;
    for (let i = 0; i < 2; i++) {
      const provider = new CountingProvider({
        kubeConfig: cluster.kubeConfig, namespace: ns.name, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry, maxPods: MAX_PODS,
      });
      providers.push(provider);
      const deps = await createActivityDeps({ provider, hostQueueSuffix: suffix });
      const made = await createWorkers({ address, taskQueue: `test-${suffix}`, hostQueueSuffix: suffix }, deps);
      taskQueue = made.sharedQueue;
      const running = made.workers.map((w) => w.run());
      stops.push(async () => {
        for (const w of made.workers) if (w.getState() === 'RUNNING') w.shutdown();
        await Promise.allSettled(running);
        await releaseActivityDeps(deps);
        await made.connection.close();
      });
    }
    client = new Client({ connection: await Connection.connect({ address }) });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const stop of stops) await stop();
    await client?.connection.close();
    await ns?.remove();
    await cluster?.release();
  }, 180_000);

  it(`${EPISODES} episodes at concurrency ${EPISODES}: never more than ${MAX_PODS} pods at once, both workers seed, all score 1`, async () => {
    const alive = new Set<string>();
    let most = 0;
    const watching = await new Watch(cluster.kubeConfig).watch(`/api/v1/namespaces/${ns.name}/pods`, {}, (type: string, pod: V1Pod) => {
      const name = pod.metadata!.name!;
      if (type === 'ADDED') alive.add(name);
      if (type === 'DELETED') alive.delete(name);
      most = Math.max(most, alive.size);
    }, () => undefined);
    try {
      const handle = await startBatch({
        dataset: writeDataset(sleepyTasks(EPISODES, 3)),
        resultsDir: mkdtempSync(join(tmpdir(), 'berth-k8s-shared-')), concurrency: EPISODES, taskQueue, client,
      });
      const summary = await handle.wait();
      expect(summary.rows.map((r) => r.reward)).toEqual(Array(EPISODES).fill(1));
    } finally {
      watching.abort();
    }
    expect(most).toBe(MAX_PODS);
    expect(providers.map((p) => p.seeds > 0)).toEqual([true, true]);
    expect(providers[0]!.seeds + providers[1]!.seeds).toBe(EPISODES);
    expect(await ns.pods()).toEqual([]);
  }, 600_000);
});
