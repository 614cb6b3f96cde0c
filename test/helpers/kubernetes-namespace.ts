// A namespace of a test file's own on the local cluster (tests that count, watch or delete pods, or keep slots, must
// not see other files' pods), and a berth.toml that points a `berth worker` process at it.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalCluster } from './kubernetes.ts';
import { waitUntil } from './worker-process.ts';

export interface OwnNamespace {
  name: string;
  /** Berth's pods in it now (Terminating ones too: they still hold a node's room). */
  pods(): Promise<V1Pod[]>;
  /** Deletes the namespace and waits (bounded) until it is gone. */
  remove(): Promise<void>;
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
