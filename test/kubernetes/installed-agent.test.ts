import Docker from 'dockerode';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INSTALLED_AGENTS, layerTag } from '../../src/agents/index.ts';
import { startBatch } from '../../src/client/batch.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { helloDataset, trajectoryOf } from '../agents/installed-run.ts';
import { reportedUsage, startFakeVendors, type FakeVendors } from '../agents/fake-vendors.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';

// An installed agent on the Kubernetes sandbox (issue 23, docs/kubernetes.md "The model gateway for pods"): its layer
// built over the task image by the engine beside the worker, pushed to the cluster's registry and pulled by digest;
// its model calls go from the pod to the worker's gateway, which holds the key and counts the usage (docs/design.md
// section 7, "Agents and keys"). The fake vendor is the only stand-in: the paid API.

const REAL_KEY = 'sk-berth-k8s-REAL-3e9a1c7b5d2f8a60';

/** Where `needle` is in the episode's pod: files written since the pod was made, and every process's environment. */
async function findInPod(cluster: LocalCluster, provider: KubernetesSandboxProvider, batchId: string, needle: string): Promise<{ files: string[]; environ: string[]; spec: string[] }> {
  const pod = (await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: 'berth.sandbox' })).items
    .find((p) => p.metadata?.annotations?.['berth.batch'] === batchId);
  if (!pod) throw new Error(`no pod of batch ${batchId}`);
  const since = Math.floor(new Date(pod.metadata!.creationTimestamp!).getTime() / 1000) - 1;
  // Regular files only: a detached process's FIFOs block a reader until the agent ends, which waits for this check.
  const script = `k="$1"
find / -xdev -type f -newermt "@${since}" -print0 2>/dev/null | xargs -0 -r grep -lsF -- "$k"
echo ---
for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < "$e" 2>/dev/null | grep -F -- "$k"; done
true`;
  const handle = await provider.attach(pod.metadata!.annotations!['berth.name']!);
  const r = await provider.exec(handle, { command: `set -- ${JSON.stringify(needle)}\n${script}`, user: 'root' });
  const [files, environ] = r.stdout.split('---\n');
  const spec = (pod.spec?.containers ?? []).flatMap((c) => (c.env ?? []).map((e) => `${e.name}=${e.value ?? ''}`)).filter((e) => e.includes(needle));
  return { files: files!.split('\n').filter(Boolean), environ: (environ ?? '').split('\n').filter(Boolean), spec };
}

describe('an installed agent on the Kubernetes sandbox (real cluster, real Temporal, a fake model vendor)', () => {
  let cluster: LocalCluster;
  let provider: KubernetesSandboxProvider;
  let workers: TestCluster;
  let fake: FakeVendors;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    fake = await startFakeVendors(REAL_KEY);
    Object.assign(process.env, { ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: fake.url, OPENAI_API_KEY: REAL_KEY, OPENAI_BASE_URL: `${fake.url}/v1`, BERTH_GATEWAY_RETRY_BASE_MS: '50' });
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    workers = await startTestWorkers('k8s-installed', { provider });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await workers?.stop();
    await fake?.close();
    await cluster?.release();
  }, 120_000);

  it.each([
    { agent: 'claude-code' as const, model: 'anthropic/claude-sonnet-4-5', path: '/v1/messages' },
    { agent: 'codex' as const, model: 'openai/gpt-5-codex', path: '/v1/responses' },
  ])('$agent scores 1 on examples/hello from its layer pulled by digest, with the usage the vendor reported and no key in the pod', async ({ agent, model, path }) => {
    const batchId = `k8s-installed-${agent}-${Date.now().toString(36)}`;
    let seen: { key: Awaited<ReturnType<typeof findInPod>>; token: Awaited<ReturnType<typeof findInPod>> } | undefined;
    let seenError: unknown;
    fake.beforeFinish = async () => {
      if (seen || seenError) return;
      try {
        seen = { key: await findInPod(cluster, provider, batchId, REAL_KEY), token: await findInPod(cluster, provider, batchId, '=berth-') };
      } catch (err) {
        seenError = err;
      }
    };
    const from = fake.reported.length;
    const handle = await startBatch({
      dataset: helloDataset(), agent, model, batchId, client: workers.client, taskQueue: workers.taskQueue,
      resultsDir: mkdtempSync(`${tmpdir()}/berth-k8s-installed-`),
    });
    const rows = (await handle.wait()).rows;
    await handle.close();
    fake.beforeFinish = undefined;
    const row = rows[0]!;
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(validateAtif(trajectoryOf(row))).toEqual({ ok: true });

    // The calls came from the pod through the gateway: the vendor saw only the real key, and the row's usage is its own.
    const calls = fake.reported.slice(from).filter((r) => !r.probe);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c) => c.path === path)).toBe(true);
    expect(row.usage).toMatchObject(reportedUsage(fake, from));
    expect([...fake.keysSeen].every((k) => k === REAL_KEY)).toBe(true);

    // The key is nowhere in the pod; the episode's token is in the agent's environment (so the search sees what is there).
    expect(seenError).toBeUndefined();
    expect(seen!.key).toEqual({ files: [], environ: [], spec: [] });
    expect(seen!.token.environ.length).toBeGreaterThan(0);
    expect(JSON.stringify(row)).not.toContain(REAL_KEY);
    expect(spawnSync('grep', ['-rlF', REAL_KEY, row.logs_dir!], { encoding: 'utf8' }).stdout).toBe('');

    // The layer is in the registry, pinned by digest: what the pod pulled.
    const layer = layerTag(await provider.images.id('berth-base:bookworm'), INSTALLED_AGENTS[agent]);
    expect(await provider.images.id(layer)).toMatch(new RegExp(`^127\\.0\\.0\\.1:\\d+/berth/berth-agent-${agent}@sha256:[0-9a-f]{64}$`));
  }, 900_000);
});
