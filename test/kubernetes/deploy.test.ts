// deploy/kubernetes/ asked of the real apiserver of the local cluster (issue 23, deploy/kubernetes/): the worker's
// service account is made and bound for real, and may do exactly what the Kubernetes driver does (pods, their exec
// and logs in its own namespace) and nothing else; the worker's StatefulSet and its berth.toml are accepted by a
// server-side dry run with strict field validation, and that berth.toml is one Berth itself reads as the Kubernetes
// sandbox.
import { AppsV1Api, AuthorizationV1Api, KubernetesObjectApi, type KubernetesObject, type V1ConfigMap, type V1StatefulSet } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadBerthConfig } from '../../src/config/berth-config.ts';
import { repoRoot } from '../helpers/cli.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';

const deployDir = join(repoRoot, 'deploy', 'kubernetes');
const manifests = (file: string): Array<KubernetesObject & Record<string, unknown>> =>
  parseAllDocuments(readFileSync(join(deployDir, file), 'utf8')).map((d) => d.toJSON() as KubernetesObject & Record<string, unknown>);

/** What the Kubernetes driver (src/sandbox/kubernetes/) asks the apiserver for: every one must be allowed. */
const DRIVER_NEEDS: Array<[verb: string, resource: string, subresource?: string, group?: string]> = [
  ['create', 'pods'], ['get', 'pods'], ['list', 'pods'], ['watch', 'pods'], ['delete', 'pods'],
  ['create', 'pods', 'exec'], ['get', 'pods', 'exec'], ['get', 'pods', 'log'],
  // The kubelet's Started events (src/sandbox/kubernetes/started-events.ts).
  ['watch', 'events'],
  // The slots as Leases (src/sandbox/kubernetes/slot-leases.ts) and the pod quota that bounds them.
  ...(['create', 'get', 'list', 'update', 'delete'] as const).map((v): [string, string, undefined, string] => [v, 'leases', undefined, 'coordination.k8s.io']),
  ['get', 'resourcequotas'], ['list', 'resourcequotas'],
  // [kubernetes] network_policies = true (src/sandbox/kubernetes/pod-policies.ts).
  ...(['create', 'get', 'update'] as const).map((v): [string, string, undefined, string] => [v, 'networkpolicies', undefined, 'networking.k8s.io']),
];

describe('deploy/kubernetes on the local cluster', () => {
  const namespace = `berth-deploy-${randomBytes(3).toString('hex')}`;
  let cluster: LocalCluster;
  let objects: KubernetesObjectApi;
  beforeAll(async () => {
    cluster = await useLocalCluster();
    objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
    await cluster.core.createNamespace({ body: { metadata: { name: namespace } } });
  }, FIRST_BUILD_TIMEOUT_MS);
  afterAll(async () => {
    await cluster?.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    await cluster?.release();
  });

  it('every object is labelled as Berth\'s worker, so one selector finds (and removes) the whole deployment', () => {
    for (const o of [...manifests('rbac.yaml'), ...manifests('rbac-pull-secret.yaml'), ...manifests('worker.yaml')]) {
      expect(o.metadata?.labels, `${o.kind} ${o.metadata?.name}`).toMatchObject({ 'app.kubernetes.io/name': 'berth', 'app.kubernetes.io/component': 'worker' });
    }
  });

  it('the service account may do what the driver does in its namespace, and nothing more', async () => {
    for (const o of manifests('rbac.yaml')) await objects.create({ ...o, metadata: { ...o.metadata, namespace } });
    const authz = cluster.kubeConfig.makeApiClient(AuthorizationV1Api);
    const allowed = async (verb: string, resource: string, subresource?: string, ns = namespace, group = '') => (await authz.createSubjectAccessReview({
      body: { spec: { user: `system:serviceaccount:${namespace}:berth-worker`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'], resourceAttributes: { namespace: ns, verb, resource, subresource, group } } },
    })).status?.allowed ?? false;
    for (const [verb, resource, sub, group] of DRIVER_NEEDS) expect(await allowed(verb, resource, sub, namespace, group), `${verb} ${group ? `${group}/` : ''}${resource}${sub ? `/${sub}` : ''}`).toBe(true);
    expect(await allowed('get', 'secrets'), 'secrets').toBe(false);
    expect(await allowed('create', 'pods', undefined, 'default'), 'pods in another namespace').toBe(false);
    expect(await allowed('patch', 'pods'), 'patching pods').toBe(false);
    expect(await allowed('create', 'leases', undefined, 'default', 'coordination.k8s.io'), 'leases in another namespace').toBe(false);
    expect(await allowed('create', 'resourcequotas'), 'changing the quota').toBe(false);
    expect(await allowed('create', 'events'), 'making events').toBe(false);

    // rbac-pull-secret.yaml beside it: the worker may make and rotate its pull secret (src/sandbox/kubernetes/pull-secret.ts)
    // and still list none, delete none, and touch none in another namespace.
    for (const o of manifests('rbac-pull-secret.yaml')) await objects.create({ ...o, metadata: { ...o.metadata, namespace } });
    await waitForAllowed(() => allowed('create', 'secrets'));
    for (const verb of ['create', 'get', 'update']) expect(await allowed(verb, 'secrets'), `${verb} secrets`).toBe(true);
    for (const verb of ['list', 'watch', 'delete']) expect(await allowed(verb, 'secrets'), `${verb} secrets`).toBe(false);
    expect(await allowed('get', 'secrets', undefined, 'default'), 'secrets in another namespace').toBe(false);
  }, 60_000);

  it('the worker\'s ConfigMap and StatefulSet pass a strict server-side dry run', async () => {
    const worker = manifests('worker.yaml');
    expect(worker.map((o) => o.kind)).toEqual(['ConfigMap', 'StatefulSet']);
    const [configMap, statefulSet] = worker.map((o) => ({ ...o, metadata: { ...o.metadata, namespace } }));
    const strictDryRun = { namespace, dryRun: 'All', fieldValidation: 'Strict' } as const;
    expect((await cluster.core.createNamespacedConfigMap({ ...strictDryRun, body: configMap as V1ConfigMap })).metadata?.name).toBe('berth-config');
    const apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
    const made = await apps.createNamespacedStatefulSet({ ...strictDryRun, body: statefulSet as V1StatefulSet });
    expect(made.spec?.template.spec?.serviceAccountName).toBe('berth-worker');
    // A dry run makes nothing.
    expect((await cluster.core.listNamespacedConfigMap({ namespace, labelSelector: 'app.kubernetes.io/name=berth' })).items).toEqual([]);
  }, 60_000);

  it('the ConfigMap\'s berth.toml is read by Berth as the Kubernetes sandbox with a registry', () => {
    const configMap = manifests('worker.yaml').find((o) => o.kind === 'ConfigMap') as { data: Record<string, string> };
    const file = join(mkdtempSync(join(tmpdir(), 'berth-deploy-')), 'berth.toml');
    writeFileSync(file, configMap.data['berth.toml']!);
    const { config } = loadBerthConfig(file);
    expect(config.sandbox.provider).toBe('kubernetes');
    expect(config.kubernetes.registry).toMatch(/^[\w.-]+:\d+$/);
  });
});

/** RBAC objects just made take a moment to reach the authorizer's cache. */
async function waitForAllowed(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 50 && !(await check()); i++) await new Promise((r) => setTimeout(r, 200));
}
