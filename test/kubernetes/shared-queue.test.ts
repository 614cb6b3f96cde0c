import { Client, Connection } from '@temporalio/client';
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHostServices, releaseHostServices } from '../../src/host/deps.ts';
import { startBatch } from '../../src/client/batch.ts';
import { temporalAddress } from '../../src/config/temporal.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider, type SandboxSpec } from '../../src/sandbox/index.ts';
import { createWorkers } from '../../src/worker.ts';
import { ownNamespace, watchPodCount, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { sandboxSharedQueue } from '../../src/config/queues.ts';

// Two workers on one cluster (issue 23, "Scheduling and slots": any number of workers drive one cluster with no
// per-host queue, and [kubernetes].max_pods bounds a batch; docs/kubernetes.md, Sandbox queues on Kubernetes). Each
// worker has its own provider, activities, slots object and connection: what they share is the cluster's sandbox
// queue and the slot Leases in the cluster. The first worker alone seeds, the second takes over while the first's
// episodes still hold their slots (so which worker Temporal hands a task to never decides the outcome). A watch on
// the namespace's pods sees every pod come and go.

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
  let client: Client;
  const { address } = temporalAddress();
  const suffix = `k8s-shared-${randomBytes(3).toString('hex')}`;
  const taskQueue = sandboxSharedQueue(`test-${suffix}`, 'kubernetes');
  const running: Array<{ provider: CountingProvider; stop(): Promise<void> }> = [];

  /** A worker of its own (provider, activities, slots object, connection) on the cluster's queue of this file. */
  async function startWorker(): Promise<{ provider: CountingProvider; stop(): Promise<void> }> {
    const provider = new CountingProvider({
      kubeConfig: cluster.kubeConfig, namespace: ns.name, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry, maxPods: MAX_PODS,
    });
    const deps = await createHostServices({ provider, hostQueueSuffix: suffix });
    const made = await createWorkers({ address, taskQueue: `test-${suffix}`, hostQueueSuffix: suffix }, deps);
    const runs = made.workers.map((w) => w.run());
    let stopped: Promise<void> | undefined;
    const w = {
      provider,
      stop: () => stopped ??= (async () => {
        for (const x of made.workers) if (x.getState() === 'RUNNING') x.shutdown();
        await Promise.allSettled(runs);
        await releaseHostServices(deps);
        await made.connection.close();
      })(),
    };
    running.push(w);
    return w;
  }

  beforeAll(async () => {
    cluster = await useLocalCluster();
    ns = await ownNamespace(cluster.core, 'shared-queue');
    client = new Client({ connection: await Connection.connect({ address }) });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const w of running) await w.stop();
    await client?.connection.close();
    await ns?.remove();
    await cluster?.release();
  }, 180_000);

  it(`${EPISODES} episodes at concurrency ${EPISODES}, begun on one worker and finished on another: never more than ${MAX_PODS} pods at once, all score 1`, async () => {
    const pods = await watchPodCount(cluster.kubeConfig, cluster.core, ns.name);
    try {
      const a = await startWorker();
      const handle = await startBatch({
        dataset: writeDataset(sleepyTasks(EPISODES, 8)), resultsDir: mkdtempSync(join(tmpdir(), 'berth-k8s-shared-')), concurrency: EPISODES, taskQueue, client,
      });
      // Worker a holds max_pods slots (in the cluster) for episodes still running; worker b then takes over the queue:
      // it goes on with a's episodes and seeds the rest only as a's slots are freed.
      await waitUntil(() => pods.now() === MAX_PODS, 180_000, `${MAX_PODS} pods from the first worker`);
      const b = await startWorker();
      await a.stop();
      const summary = await handle.wait();
      expect(summary.rows.map((r) => r.reward)).toEqual(Array(EPISODES).fill(1));
      expect(a.provider.seeds).toBeGreaterThanOrEqual(1);
      expect(b.provider.seeds).toBeGreaterThanOrEqual(EPISODES - a.provider.seeds);
    } finally {
      pods.stop();
    }
    expect(pods.most()).toBe(MAX_PODS);
    await waitUntil(async () => (await ns.pods()).length === 0, 30_000, 'no pod left');
  }, 600_000);
});
