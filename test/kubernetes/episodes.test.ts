import Docker from 'dockerode';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RemovalJournal } from '../../src/host/removal-journal.ts';
import { startBatch } from '../../src/client/batch.ts';
import { homePath } from '../../src/config/paths.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { podName } from '../../src/sandbox/kubernetes/pod-spec.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { localActivityTypes, patchMarkers, recordHistory } from '../helpers/histories.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { waitUntil } from '../helpers/worker-process.ts';

// Episodes on the Kubernetes sandbox end to end (issue 23, docs/kubernetes.md "What is left" 1-3): a real worker on
// queues of this file's own whose provider is the Kubernetes one on the local cluster; the task image is the local
// engine's, pushed to the cluster's registry at prepare and pulled by digest.

const examples = join(import.meta.dirname, '..', '..', 'examples');
const PINNED = /^127\.0\.0\.1:\d+\/berth\/berth-base@sha256:[0-9a-f]{64}$/;

describe('episodes on the Kubernetes sandbox (real cluster, real Temporal)', () => {
  let cluster: LocalCluster;
  let provider: KubernetesSandboxProvider;
  let workers: TestCluster;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    workers = await startTestWorkers('k8s-episodes', { provider });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await workers?.stop();
    await cluster?.release();
  }, 120_000);

  /** The pods carrying the episode's workflow annotation. */
  const podsOf = async (workflowId: string) => (await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: 'berth.sandbox' })).items
    .filter((p) => p.metadata?.annotations?.['berth.workflow'] === workflowId);

  it('examples/hello with the oracle scores 1 on pods pulled by digest, and no pod is left', async () => {
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-k8s-hello-'));
    const handle = await startBatch({ dataset: join(examples, 'hello'), agent: 'oracle', resultsDir, taskQueue: workers.taskQueue, client: workers.client });
    const summary = await handle.wait();
    expect(summary.rows).toHaveLength(1);
    const row = summary.rows[0]!;
    expect(row).toMatchObject({ task_id: 'hello', reward: 1, mask_sample: false, failure_kind: null });
    // The base image was pushed to the cluster's registry and the batch pinned to it by digest.
    expect(await provider.images.id('berth-base:bookworm')).toMatch(PINNED);
    // The episode's logs came out of the pod to the results folder (downloaded by the worker, moved by hostArchiveChunk).
    const trial = readdirSync(resultsDir).find((f) => f.startsWith('hello__'))!;
    expect(readFileSync(join(resultsDir, trial, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    expect(existsSync(join(resultsDir, trial, 'agent', 'oracle.txt'))).toBe(true);
    expect(await podsOf(row.workflow_id)).toEqual([]);
    // One activity seeds and runs the agent, on the worker that keeps the episode's files (cluster-seed-with-agent,
    // within episode-v6 since: one patch marker, as on Docker); the plan and its slot a local activity (episode-v8).
    const history = await workers.client.workflow.getHandle(row.workflow_id).fetchHistory();
    const activities = (history.events ?? []).flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(activities).toEqual(['seedThenAgentTurn', 'verifyTurn']);
    expect(localActivityTypes(history.events ?? [])).toEqual(['planAndTryHost']);
    expect(patchMarkers(history.events ?? [])).toEqual(['episode-v8']);
    await recordHistory(workers.client, row.workflow_id, 'episode-k8s-v8');
  }, 300_000);

  it('a pod deleted mid-turn masks the episode as provider_unavailable within 30 s, nothing left behind', async () => {
    const dataset = writeDataset({
      'slow/task.toml': BASE_TOML.replace('timeout_sec = 60\n[verifier]', 'timeout_sec = 300\n[verifier]'),
      'slow/instruction.md': 'Take your time.\n',
      'slow/solution/solve.sh': '#!/bin/bash\ntouch /app/started\nsleep 240\n',
      'slow/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-k8s-loss-')), taskQueue: workers.taskQueue, client: workers.client });
    const workflowId = `berth/${handle.batchId}/slow/1`;
    let pod = '';
    await waitUntil(async () => {
      const [p] = await podsOf(workflowId);
      if (!p) return false;
      pod = p.metadata!.name!;
      expect(p.spec?.containers[0]?.image).toMatch(PINNED);
      if (!p.status?.containerStatuses?.[0]?.state?.running) return false;
      return (await provider.exec(await provider.attach(p.metadata!.annotations!['berth.name']!), { command: 'test -f /app/started' })).exitCode === 0;
    }, 120_000, 'the agent process in its pod');
    expect(pod).toBe(podName(pod));
    const deletedAt = Date.now();
    await cluster.core.deleteNamespacedPod({ name: pod, namespace: 'default', gracePeriodSeconds: 0 });
    const summary = await handle.wait();
    expect(summary.rows[0]).toMatchObject({ mask_sample: true, reward: null, failure_kind: 'provider_unavailable' });
    expect((Date.now() - deletedAt) / 1000).toBeLessThan(30);
    await waitUntil(async () => (await podsOf(workflowId)).length === 0, 30_000, 'no pod of the episode');
    // Nor a removal left pending (teardown asks for the episode's group too, which the Kubernetes sandbox never makes).
    await waitUntil(() => Promise.resolve(new RemovalJournal(homePath('removals', workers.hostQueue)).entries().length === 0), 30_000, 'no removal pending');
  }, 300_000);
});
