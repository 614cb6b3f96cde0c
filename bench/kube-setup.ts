// What the Kubernetes benchmarks share: the local cluster (started as the tests start it, when it is not up), a
// namespace of the run's own (removed at the end) and a berth.toml that points the worker at it.
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useLocalCluster } from '../test/helpers/kubernetes.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface KubeBench { kc: KubeConfig; core: CoreV1Api; ns: string; registry: string; kubeconfig: string; config: string; remove(): Promise<void> }

export async function kubeBenchNamespace(): Promise<KubeBench> {
  const cluster = await useLocalCluster();
  const { kubeconfig, registry, kubeConfig: kc, core } = cluster;
  const ns = `berth-bench-${process.pid}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  while (!(await core.listNamespacedServiceAccount({ namespace: ns })).items.length) await sleep(200);
  const config = join(mkdtempSync(join(tmpdir(), 'berth-bench-k8s-')), 'berth.toml');
  writeFileSync(config, `[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "${registry}"\nnamespace = "${ns}"\nkubeconfig = "${kubeconfig}"\nmax_pods = 64\n`);
  const remove = async () => {
    await core.deleteNamespace({ name: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
    await cluster.release();
  };
  return { kc, core, ns, registry, kubeconfig, config, remove };
}
