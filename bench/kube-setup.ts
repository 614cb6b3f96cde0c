// What the Kubernetes benchmarks share: the local cluster (started as the tests start it, when it is not up), a
// namespace of the run's own (removed at the end) and a berth.toml that points the worker at it.
import type { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { useLocalCluster } from '../test/helpers/kubernetes.ts';
import { machineBusy } from './profile/cpu.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface KubeBench {
  kc: KubeConfig; core: CoreV1Api; ns: string; registry: string; kubeconfig: string; config: string;
  /** Waits until the run before has left the node (see settleNode). */
  settle(): Promise<string>;
  remove(): Promise<void>;
}

/** The node's pod cgroups (cgroup v1, the local cluster's cgroupfs driver): one per pod the kubelet still runs or tears down. */
function podCgroups(): number {
  let n = 0;
  for (const qos of ['', 'besteffort', 'burstable']) {
    const dir = join('/sys/fs/cgroup/cpu/kubepods', qos);
    if (existsSync(dir)) n += readdirSync(dir).filter((d) => d.startsWith('pod')).length;
  }
  return n;
}

/**
 * Before a timed run: the namespace's pods gone, the node's pod cgroups back to `baseline` and a second with the
 * machine at most 15% busy (up to 60 s). A pod deleted with grace 0 leaves the API at once while the kubelet, the CNI
 * and containerd tear it down for seconds after: without this, the run that follows pays for the teardown of the
 * run before. Answers what it waited for, for the log.
 */
export async function settleNode(core: CoreV1Api, ns: string, baseline: number): Promise<string> {
  const t = Date.now();
  while (Date.now() - t < 60_000) {
    const left = (await core.listNamespacedPod({ namespace: ns })).items.length;
    const busy0 = machineBusy();
    await sleep(1000);
    const busy = machineBusy() - busy0; // CPU-s in one second, of 2 cores and more
    if (left === 0 && podCgroups() <= baseline && busy <= 0.15 * cpus().length) break;
  }
  return `settled in ${((Date.now() - t) / 1000).toFixed(1)} s`;
}

export async function kubeBenchNamespace(): Promise<KubeBench> {
  const cluster = await useLocalCluster();
  const { kubeconfig, registry, kubeConfig: kc, core } = cluster;
  const ns = `berth-bench-${process.pid}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  while (!(await core.listNamespacedServiceAccount({ namespace: ns })).items.length) await sleep(200);
  const config = join(mkdtempSync(join(tmpdir(), 'berth-bench-k8s-')), 'berth.toml');
  writeFileSync(config, `[sandbox]\nprovider = "kubernetes"\n[kubernetes]\nregistry = "${registry}"\nnamespace = "${ns}"\nkubeconfig = "${kubeconfig}"\nmax_pods = 64\n`);
  const baseline = podCgroups();
  const settle = () => settleNode(core, ns, baseline);
  const remove = async () => {
    await core.deleteNamespace({ name: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
    await cluster.release();
  };
  return { kc, core, ns, registry, kubeconfig, config, settle, remove };
}
