// What the Kubernetes benchmarks share: the local cluster's endpoints, a namespace of the run's own (removed at the
// end) and a berth.toml that points the worker at it.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface KubeBench { kc: KubeConfig; core: CoreV1Api; ns: string; registry: string; kubeconfig: string; config: string; remove(): Promise<void> }

export async function kubeBenchNamespace(): Promise<KubeBench> {
  const endpoints = JSON.parse(readFileSync(join(process.env.BERTH_HOME ?? join(homedir(), '.berth'), 'kubernetes', 'endpoints.json'), 'utf8')) as { kubeconfig: string; registry: string };
  const { kubeconfig, registry } = endpoints;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const ns = `berth-bench-${process.pid}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  while (!(await core.listNamespacedServiceAccount({ namespace: ns })).items.length) await sleep(200);
  const config = join(mkdtempSync(join(tmpdir(), 'berth-bench-k8s-')), 'berth.toml');
  writeFileSync(config, `[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "${registry}"\nnamespace = "${ns}"\nkubeconfig = "${kubeconfig}"\nmax_pods = 64\n`);
  const remove = async () => { await core.deleteNamespace({ name: ns, gracePeriodSeconds: 0 }).catch(() => undefined); };
  return { kc, core, ns, registry, kubeconfig, config, remove };
}
