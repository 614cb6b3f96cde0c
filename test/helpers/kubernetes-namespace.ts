// A namespace of a test file's own on the local cluster (tests that count, watch or delete pods, or keep slots, must
// not see other files' pods), and a berth.toml that points a `berth worker` process at it.
import { Watch, type CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxProvider } from '../../src/sandbox/index.ts';
import type { LocalCluster } from './kubernetes.ts';
import { waitUntil } from './worker-process.ts';

export interface OwnNamespace {
  name: string;
  /** Berth's pods in it now (Terminating ones too: they still hold a node's room). */
  pods(): Promise<V1Pod[]>;
  /** Deletes the namespace and waits (bounded) until it is gone. */
  remove(): Promise<void>;
}

/** The pod of episode `workflowId` in the namespace, if any. */
export async function episodePod(ns: OwnNamespace, workflowId: string): Promise<V1Pod | undefined> {
  return (await ns.pods()).find((p) => p.metadata?.annotations?.['berth.workflow'] === workflowId);
}

/** Whether `path` exists in the running pod of episode `workflowId` (an agent's marker: its turn is under way). */
export async function inEpisodePod(ns: OwnNamespace, provider: SandboxProvider, workflowId: string, path: string): Promise<boolean> {
  const pod = await episodePod(ns, workflowId);
  if (!pod?.status?.containerStatuses?.[0]?.state?.running) return false;
  return (await provider.exec(await provider.attach(pod.metadata!.annotations!['berth.name']!), { command: `test -f ${path}` })).exitCode === 0;
}

export async function ownNamespace(core: CoreV1Api, name: string): Promise<OwnNamespace> {
  const ns = `berth-${name}-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: ns, labels: { 'berth.test': name } } } });
  // The namespace's default service account is made by the controller manager: pods are refused until it exists.
  await waitUntil(async () => (await core.listNamespacedServiceAccount({ namespace: ns })).items.some((s) => s.metadata?.name === 'default'), 60_000, `service account default in ${ns}`);
  return {
    name: ns,
    pods: async () => (await core.listNamespacedPod({ namespace: ns, labelSelector: 'berth.sandbox' })).items,
    async remove() {
      await core.deleteNamespace({ name: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
      await waitUntil(async () => {
        try {
          await core.readNamespace({ name: ns });
          return false;
        } catch {
          return true;
        }
      }, 120_000, `namespace ${ns} gone`).catch(() => undefined);
    },
  };
}

/** A berth.toml for `berth worker` processes on the Kubernetes sandbox in `namespace` of the local cluster. */
export function kubernetesConfigFile(cluster: LocalCluster, namespace: string, maxPods?: number): string {
  const file = join(mkdtempSync(join(tmpdir(), 'berth-k8s-config-')), 'berth.toml');
  writeFileSync(file, [
    '[sandbox]', 'provider = "kubernetes"', '[kubernetes]', `registry = "${cluster.registry}"`, `namespace = "${namespace}"`,
    `kubeconfig = "${cluster.kubeconfig}"`, ...(maxPods ? [`max_pods = ${maxPods}`] : []), '',
  ].join('\n'));
  return file;
}

/**
 * Every pod of the namespace as it comes and goes, through a watch (started again whenever the apiserver ends it, from
 * a fresh list, so no deletion missed in between leaves a pod counted): how many there are now and the most seen.
 */
export async function watchPodCount(kubeConfig: KubeConfig, core: CoreV1Api, namespace: string): Promise<{ now(): number; most(): number; stop(): void }> {
  let alive = new Set<string>();
  let most = 0;
  let stopped = false;
  let current: { abort(): void } | undefined;
  const start = async (): Promise<void> => {
    const list = await core.listNamespacedPod({ namespace });
    alive = new Set(list.items.map((p) => p.metadata!.name!));
    most = Math.max(most, alive.size);
    current = await new Watch(kubeConfig).watch(`/api/v1/namespaces/${namespace}/pods`, { resourceVersion: list.metadata?.resourceVersion }, (type: string, pod: V1Pod) => {
      const name = pod.metadata!.name!;
      if (type === 'ADDED') alive.add(name);
      if (type === 'DELETED') alive.delete(name);
      most = Math.max(most, alive.size);
    }, () => {
      if (!stopped) setTimeout(() => void start().catch(() => undefined), 50);
    });
  };
  await start();
  return {
    now: () => alive.size,
    most: () => most,
    stop() {
      stopped = true;
      current?.abort();
    },
  };
}
