import { CoordinationV1Api } from '@kubernetes/client-node';
import Docker from 'dockerode';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { sandboxSharedQueue } from '../../src/config/queues.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { SLOTS_LABEL } from '../../src/sandbox/kubernetes/slot-leases.ts';
import { episodePod, inEpisodePod, kubernetesConfigFile, ownNamespace, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { BASE_TOML, writeDataset } from '../helpers/tasks.ts';
import { ownWorkerQueues, waitUntil } from '../helpers/worker-process.ts';

// A `berth worker` on the Kubernetes sandbox killed with -9 (issue 23, Tests: "kill -9 of the worker mid-turn (the
// episode resumes, no turn redone)" and "the janitor after a killed worker"; docs/design.md section 3, Surviving restarts).
// The workers are real processes on queues of this file's own, in a namespace of its own; the second worker polls the
// same cluster queue as the first (docs/kubernetes.md, Sandbox queues on Kubernetes), so the episode goes on there.

// Three steps; step 2's agent runs for a while. Step 3's verifier rewards 1 only when every step's agent ran exactly
// once, so a redone turn 1 (or a restarted turn 2) cannot score 1 (as test/chaos/worker-crash.test.ts on Docker).
const step = (n: number, sleep: number) => ({
  [`three/steps/s${n}/instruction.md`]: `Step ${n}\n`,
  [`three/steps/s${n}/solution/solve.sh`]: `#!/bin/bash\necho run >> /app/runs-${n}\ntouch /app/started-${n}\nsleep ${sleep}\n`,
  [`three/steps/s${n}/tests/test.sh`]: `#!/bin/bash\nok=1\nfor i in $(seq 1 ${n}); do [ "$(wc -l < /app/runs-$i)" = 1 ] || ok=0; done\necho $ok > /logs/verifier/reward.txt\n`,
});
const threeSteps = () => writeDataset({
  'three/task.toml': `[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n${[1, 2, 3].map((n) => `[[steps]]\nname = "s${n}"\n[steps.agent]\ntimeout_sec = 120\n[steps.verifier]\ntimeout_sec = 60\n`).join('')}`,
  ...step(1, 0), ...step(2, 20), ...step(3, 0),
});

describe('a Kubernetes worker killed with -9', () => {
  let cluster: LocalCluster;
  let ns: OwnNamespace;
  let provider: KubernetesSandboxProvider;
  const own = ownWorkerQueues('k8s-kill');
  const taskQueue = sandboxSharedQueue(own.env.BERTH_TASK_QUEUE, 'kubernetes');

  beforeAll(async () => {
    cluster = await useLocalCluster();
    ns = await ownNamespace(cluster.core, 'kill');
    Object.assign(own.env, { BERTH_CONFIG: kubernetesConfigFile(cluster, ns.name, 4) });
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, namespace: ns.name, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
  }, FIRST_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await own.stop();
    await ns?.remove();
    await cluster?.release();
  }, 180_000);

  const podOf = (workflowId: string) => episodePod(ns, workflowId);
  const inPod = (workflowId: string, path: string) => inEpisodePod(ns, provider, workflowId, path);
  const slotLeases = async () => (await cluster.kubeConfig.makeApiClient(CoordinationV1Api).listNamespacedLease({ namespace: ns.name, labelSelector: SLOTS_LABEL })).items;

  it('mid-turn: the episode resumes on a second worker of the cluster, every turn once (its history says so), scores 1', async () => {
    const first = own.startWorker();
    const client = await own.client();
    const handle = await startBatch({ dataset: threeSteps(), resultsDir: mkdtempSync(join(tmpdir(), 'berth-k8s-kill-')), taskQueue, client });
    const workflowId = `berth/${handle.batchId}/three/1`;
    await waitUntil(() => inPod(workflowId, '/app/started-2'), 180_000, "turn 2's agent process in its pod");
    first.kill9();
    const second = own.startWorker();

    const summary = await handle.wait();
    const row = summary.rows[0]!;
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(row.turns.map((t) => t.reward)).toEqual([1, 1, 1]);

    // The history: one agentTurn per step (no turn scheduled again); turn 2's ran twice as an attempt, and its last
    // attempt was the second worker's (it re-attached to the process already running in the pod).
    const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const turns = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'agentTurn');
    expect(turns).toHaveLength(3);
    const started = (scheduled: typeof turns[number]) => events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled.eventId))!.activityTaskStartedEventAttributes!;
    expect(started(turns[0]!).attempt).toBe(1);
    expect(started(turns[1]!).attempt).toBeGreaterThanOrEqual(2);
    expect(started(turns[1]!).identity).toContain(`${second.child.pid}@`);
    expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'seed')).toHaveLength(1);
    await waitUntil(async () => (await podOf(workflowId)) === undefined, 60_000, 'no pod of the episode');
    await waitUntil(async () => (await slotLeases()).length === 0, 60_000, 'no slot lease held');
    await second.stop();
  }, 600_000);

  it('the janitor of the next worker removes the pod a killed worker left, and its slot is freed', async () => {
    const doomed = own.startWorker();
    const client = await own.client();
    const slow = writeDataset({
      'slow/task.toml': BASE_TOML.replace('timeout_sec = 60\n[verifier]', 'timeout_sec = 300\n[verifier]'),
      'slow/instruction.md': 'Take your time.\n',
      'slow/solution/solve.sh': '#!/bin/bash\ntouch /app/started\nsleep 240\n',
      'slow/tests/test.sh': '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({ dataset: slow, resultsDir: mkdtempSync(join(tmpdir(), 'berth-k8s-janitor-')), taskQueue, client });
    const workflowId = `berth/${handle.batchId}/slow/1`;
    await waitUntil(() => inPod(workflowId, '/app/started'), 180_000, 'the agent process in its pod');
    doomed.kill9();
    // Nobody runs the episode any more: an operator ends it (no worker is left to tear its sandbox down).
    await client.workflow.getHandle(workflowId).terminate('the test: its worker was killed');
    await client.workflow.getHandle(`berth/${handle.batchId}`).terminate('the test: its worker was killed').catch(() => undefined);
    expect(await podOf(workflowId)).toBeDefined();
    expect((await slotLeases()).length).toBe(1);

    const next = own.startWorker({ BERTH_JANITOR_AT_START: '1' });
    await waitUntil(() => /janitor removed 1 orphaned sandbox/.test(next.output()), 90_000, 'the janitor at the next worker\'s start');
    await waitUntil(async () => (await podOf(workflowId)) === undefined, 30_000, 'the pod gone');
    // The slot the dead worker's episode held: freed by the next worker's reconciler (the episode is closed).
    await waitUntil(async () => (await slotLeases()).length === 0, 120_000, 'the slot freed');
  }, 600_000);
});
