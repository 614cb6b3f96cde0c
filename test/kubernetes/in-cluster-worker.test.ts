import {
  AppsV1Api, KubernetesObjectApi, Watch, type KubernetesObject, type V1ConfigMap, type V1Container, type V1Pod, type V1StatefulSet,
} from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import Docker from 'dockerode';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startBatch } from '../../src/client/batch.ts';
import { sandboxSharedQueue } from '../../src/config/queues.ts';
import { temporalAddress } from '../../src/config/temporal.ts';
import { repoRoot } from '../helpers/cli.ts';
import { ownNamespace, type OwnNamespace } from '../helpers/kubernetes-namespace.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { forwardTcp, type Forward } from '../helpers/tcp-forward.ts';
import { buildWorkerImage } from '../helpers/worker-image.ts';
import { reportedUsage, startFakeVendors, type FakeVendors } from '../agents/fake-vendors.ts';
import { ownWorkerQueues, waitUntil } from '../helpers/worker-process.ts';

// The worker deployed as deploy/kubernetes/ says, run end to end on the local cluster (issue 23, "Deployment"): the
// repository's Dockerfile built and pushed to the cluster's registry, rbac.yaml and worker.yaml applied as they are
// but for the values marked CHANGE, and a batch started from this machine run by the worker in its pod: it plans,
// prepares the image through the Docker engine DOCKER_HOST names, makes the sandbox pods through the apiserver with
// its service account's in-cluster credentials (the kubernetes Service, routed by the setup), keeps the episode's
// files in its own volume, and hands them to the client through its files queue. What this machine serves on
// loopback (the Temporal dev server, the Docker engine, the registry) the pod reaches through forwarders on the node's
// address: a real deployment names them by their own addresses instead.

const REAL_KEY = 'sk-berth-in-cluster-REAL-7c1d9e2a40b3';
const HOST_CA = '/etc/ssl/certs/ca-certificates.crt';

const manifests = (file: string): Array<KubernetesObject & Record<string, unknown>> =>
  parseAllDocuments(readFileSync(join(repoRoot, 'deploy', 'kubernetes', file), 'utf8')).map((d) => d.toJSON() as KubernetesObject & Record<string, unknown>);

/** `port` on the pod's own loopback passed to `to`: the registry is named 127.0.0.1:5050 by the nodes and so by the worker. */
const loopbackForward = (port: number, to: string): string[] => ['node', '-e', `const net = require('net');
net.createServer((c) => { const u = net.connect(${Number(to.split(':')[1])}, '${to.split(':')[0]}');
  c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); c.pipe(u).pipe(c); }).listen(${port}, '127.0.0.1');`];

describe('a Berth worker deployed in the cluster from deploy/kubernetes/', () => {
  let cluster: LocalCluster;
  let ns: OwnNamespace;
  let client: Client;
  let objects: KubernetesObjectApi;
  const forwards: Forward[] = [];
  const own = ownWorkerQueues('k8s-in-cluster');
  const taskQueue = sandboxSharedQueue(own.env.BERTH_TASK_QUEUE, 'kubernetes');
  let workerPod = '';
  let datasets = '';
  let image = '';
  let fake: FakeVendors;
  let vendorFwd: Forward;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    ns = await ownNamespace(cluster.core, 'in-cluster');
    objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig);
    client = await own.client();
    const node = await cluster.core.readNode({ name: cluster.node });
    const nodeIp = node.status!.addresses!.find((a) => a.type === 'InternalIP')!.address;
    const [temporalHost, temporalPort] = temporalAddress().address.split(':') as [string, string];
    const dockerSocket = process.env.DOCKER_HOST?.replace(/^unix:\/\//, '') ?? '/var/run/docker.sock';
    const [registryHost, registryPort] = cluster.registry.split(':') as [string, string];
    const [temporalFwd, dockerFwd, registryFwd] = await Promise.all([
      forwardTcp(nodeIp, { host: temporalHost, port: Number(temporalPort) }),
      forwardTcp(nodeIp, { path: dockerSocket }),
      forwardTcp(nodeIp, { host: registryHost, port: Number(registryPort) }),
    ]);
    forwards.push(temporalFwd!, dockerFwd!, registryFwd!);
    fake = await startFakeVendors(REAL_KEY);
    vendorFwd = await forwardTcp(nodeIp, { host: '127.0.0.1', port: Number(new URL(fake.url).port) });
    forwards.push(vendorFwd);
    image = await buildWorkerImage(new Docker(), cluster.registry);

    // The worker's volume: the local cluster has no provisioner, so a PersistentVolume made ahead for its claim.
    await cluster.core.createPersistentVolume({
      body: {
        metadata: { name: `${ns.name}-home`, labels: { 'berth.test': 'in-cluster' } },
        spec: {
          capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain',
          hostPath: { path: mkdtempSync(join(tmpdir(), 'berth-in-cluster-home-')), type: 'Directory' },
          claimRef: { namespace: ns.name, name: 'home-berth-worker-0' },
        },
      },
    });

    // The datasets' storage the manifest claims (berth-datasets), here a folder of this machine at the path the
    // client names it by.
    datasets = mkdtempSync(join(tmpdir(), 'berth-in-cluster-datasets-'));
    cpSync(join(repoRoot, 'examples', 'hello'), join(datasets, 'hello'), { recursive: true });
    await cluster.core.createPersistentVolume({
      body: {
        metadata: { name: `${ns.name}-datasets`, labels: { 'berth.test': 'in-cluster' } },
        spec: {
          capacity: { storage: '1Gi' }, accessModes: ['ReadOnlyMany'], persistentVolumeReclaimPolicy: 'Retain', storageClassName: '',
          hostPath: { path: datasets, type: 'Directory' }, claimRef: { namespace: ns.name, name: 'berth-datasets' },
        },
      },
    });
    await cluster.core.createNamespacedPersistentVolumeClaim({
      namespace: ns.name,
      body: { metadata: { name: 'berth-datasets' }, spec: { accessModes: ['ReadOnlyMany'], storageClassName: '', volumeName: `${ns.name}-datasets`, resources: { requests: { storage: '1Gi' } } } },
    });

    for (const o of manifests('rbac.yaml')) await objects.create({ ...o, metadata: { ...o.metadata, namespace: ns.name } });
    const [configMap, statefulSet] = manifests('worker.yaml') as unknown as [V1ConfigMap & KubernetesObject, V1StatefulSet & KubernetesObject];
    // The values marked CHANGE, and nothing else: the registry, the image, the Temporal frontend and the build engine.
    expect(configMap.data!['berth.toml']).toMatch(/^registry = ".*"$/m);
    configMap.data!['berth.toml'] = configMap.data!['berth.toml']!.replace(/^registry = ".*"$/m, `registry = "${cluster.registry}"`);
    const spec = statefulSet.spec!;
    spec.replicas = 1;
    const worker = spec.template.spec!.containers[0]!;
    worker.image = image;
    const setEnv = (c: V1Container, name: string, value: string) => {
      const e = (c.env ??= []).find((x) => x.name === name);
      if (e) e.value = value; else c.env.push({ name, value });
    };
    expect(worker.env!.map((e) => e.name)).toEqual(expect.arrayContaining(['TEMPORAL_ADDRESS', 'DOCKER_HOST', 'BERTH_CONFIG']));
    setEnv(worker, 'TEMPORAL_ADDRESS', temporalFwd!.address);
    setEnv(worker, 'DOCKER_HOST', `tcp://${dockerFwd!.address}`);
    const mount = worker.volumeMounts!.find((m) => m.name === 'datasets')!;
    expect(mount.mountPath).toBe('/srv/berth/datasets');
    mount.mountPath = datasets;
    // The model vendor's key and address, which only the worker's gateway holds. Installed agents are fetched from the
    // npm registry by the worker, which here answers with this machine's CA (docs: a site's own CA, handed in).
    setEnv(worker, 'ANTHROPIC_API_KEY', REAL_KEY);
    setEnv(worker, 'ANTHROPIC_BASE_URL', `http://${vendorFwd.address}`);
    setEnv(worker, 'NODE_EXTRA_CA_CERTS', HOST_CA);
    (worker.volumeMounts ??= []).push({ name: 'host-ca', mountPath: HOST_CA, readOnly: true });
    spec.template.spec!.volumes!.push({ name: 'host-ca', hostPath: { path: HOST_CA, type: 'File' } });
    // The test's own queues, so no other worker of this machine takes its activities.
    for (const [k, v] of Object.entries(own.env)) setEnv(worker, k, v);
    // The registry under the name the nodes pull by (127.0.0.1:5050), reached from the worker's pod.
    spec.template.spec!.containers.push({ name: 'registry-forward', image, command: loopbackForward(Number(registryPort), registryFwd!.address) });
    await objects.create({ ...configMap, metadata: { ...configMap.metadata, namespace: ns.name } });
    await cluster.kubeConfig.makeApiClient(AppsV1Api).createNamespacedStatefulSet({ namespace: ns.name, body: { ...statefulSet, metadata: { ...statefulSet.metadata, namespace: ns.name } } });
    workerPod = 'berth-worker-0';
    await waitUntil(async () => {
      const pollers = await client.workflowService.describeTaskQueue({
        namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (pollers.pollers ?? []).length > 0;
    }, 300_000, `the worker pod ${workerPod} polling ${taskQueue}\n${await workerLog().catch(() => '')}`);
  }, FIRST_BUILD_TIMEOUT_MS);

  const workerLog = async () => cluster.core.readNamespacedPodLog({ namespace: ns.name, name: workerPod, container: 'worker' });

  afterAll(async () => {
    await ns?.remove();
    for (const pv of ['home', 'datasets']) await cluster?.core.deletePersistentVolume({ name: `${ns?.name}-${pv}` }).catch(() => undefined);
    for (const f of forwards) await f.close();
    await fake?.close();
    await own.stop();
    await cluster?.release();
  }, 180_000);

  it('the image holds the sources and runtime dependencies, and not the npm cache they were installed from', () => {
    const r = spawnSync('docker', ['run', '--rm', '--entrypoint', 'sh', image, '-c', 'ls -A /opt/berth; test -d /opt/berth/node_modules/@temporalio/worker'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual(['bin', 'node_modules', 'package-lock.json', 'package.json', 'src']);
  });

  it('examples/hello scores 1: its sandbox a pod the worker made with its service account, its files handed over from the worker\'s volume', async () => {
    // The sandbox pods seen in the worker's namespace while the batch runs.
    const seen = new Map<string, string | undefined>();
    const watching = setInterval(() => void ns.pods().then((list) => {
      for (const p of list) seen.set(p.metadata!.name!, p.metadata?.annotations?.['berth.workflow']);
    }).catch(() => undefined), 250);
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-in-cluster-'));
    let summary;
    try {
      const handle = await startBatch({ dataset: join(datasets, 'hello'), agent: 'oracle', resultsDir, taskQueue, client });
      summary = await handle.wait();
    } finally {
      clearInterval(watching);
    }
    const log = await workerLog();
    const row = summary.rows[0]!;
    expect(row, `${row.failure_reason ?? ''}\n${log}`).toMatchObject({ task_id: 'hello', reward: 1, mask_sample: false, failure_kind: null });
    // The worker ran it: the host is its pod, and the sandbox was a pod of the worker's namespace.
    expect(row.host).toContain(workerPod);
    expect([...seen.values()]).toEqual([row.workflow_id]);
    expect(row.logs_dir).toMatch(/^\/var\/lib\/berth\//);
    // The episode's files were in the worker's volume only, and reached this machine through its files queue.
    const trial = readdirSync(resultsDir).find((n) => n.startsWith('hello__') && existsSync(join(resultsDir, n, 'result.json')))!;
    expect(trial).toBeDefined();
    expect(readFileSync(join(resultsDir, trial, 'verifier', 'reward.txt'), 'utf8').trim()).toBe('1');
    expect(existsSync(join(resultsDir, trial, 'agent', 'oracle.txt'))).toBe(true);
    const berthFiles = (JSON.parse(readFileSync(join(resultsDir, trial, 'result.json'), 'utf8')) as { berth: { files: string } }).berth.files;
    expect(berthFiles).toMatch(/^moved from the host that ran it \(\d+ bytes\) through queue \S+-files-[0-9a-f]{12}$/);
    await waitUntil(async () => (await ns.pods()).length === 0, 60_000, 'no sandbox pod left');
  }, 600_000);

  it('claude-code scores 1 through the model gateway on the worker\'s pod IP, which alone reaches the vendor and holds the key', async () => {
    const from = fake.reported.length;
    const vendorClients = vendorFwd.clients.length;
    // Every state of the sandbox pods, through a watch. The kubelet may delete a pod before its status ever showed the
    // pod's IP (Berth no longer waits for the status to say running, and reaches the pod over its keep-alive's attach):
    // the sandbox pod is known by name, and its IP, where the status showed one, is not the worker's.
    const sandboxes = new Set<string>();
    const sandboxIps = new Set<string>();
    const watching = await new Watch(cluster.kubeConfig).watch(`/api/v1/namespaces/${ns.name}/pods`, { labelSelector: 'berth.sandbox' }, (_type: string, p: V1Pod) => {
      sandboxes.add(p.metadata!.name!);
      if (p.status?.podIP) sandboxIps.add(p.status.podIP);
    }, () => undefined);
    const resultsDir = mkdtempSync(join(tmpdir(), 'berth-in-cluster-agent-'));
    let summary;
    try {
      const handle = await startBatch({ dataset: join(datasets, 'hello'), agent: 'claude-code', model: 'anthropic/claude-sonnet-4-5', taskQueue, client, resultsDir });
      summary = await handle.wait();
    } finally {
      watching.abort();
    }
    const row = summary.rows[0]!;
    const agentDir = join(resultsDir, readdirSync(resultsDir).find((n) => n.startsWith('hello__'))!, 'agent');
    const agentLogs = readdirSync(agentDir).map((f) => `--- ${f}\n${readFileSync(join(agentDir, f), 'utf8').slice(-2000)}`).join('\n');
    expect(row, `${row.failure_reason ?? ''}\nvendor calls: ${fake.reported.length - from}\n${agentLogs}\n${await workerLog()}`).toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    const calls = fake.reported.slice(from).filter((r) => !r.probe);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(row.usage).toMatchObject(reportedUsage(fake, from));
    expect([...fake.keysSeen].every((k) => k === REAL_KEY)).toBe(true);
    expect(JSON.stringify(row)).not.toContain(REAL_KEY);
    // Every connection to the vendor came from the worker's pod (its gateway), none from the agent's sandbox pod.
    const workerIp = (await cluster.core.readNamespacedPod({ namespace: ns.name, name: workerPod })).status!.podIP!;
    const callers = new Set(vendorFwd.clients.slice(vendorClients));
    expect(sandboxes.size).toBeGreaterThan(0);
    expect(sandboxes).not.toContain(workerPod);
    expect([...callers]).toEqual([workerIp]);
    expect([...sandboxIps]).not.toContain(workerIp);
  }, 900_000);
});
