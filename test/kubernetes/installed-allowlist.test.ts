import Docker from 'dockerode';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { DockerSandboxProvider, KubernetesSandboxProvider } from '../../src/sandbox/index.ts';
import { helloDataset } from '../agents/installed-run.ts';
import { startFakeVendors, type FakeVendors } from '../agents/fake-vendors.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';

// An installed agent in an allowlist phase on the Kubernetes sandbox (docs/kubernetes.md "Network per phase"): its pod
// may reach the worker's egress address alone, where the model gateway listens too, so its model calls still go
// through, while the phase admits no other host. The fake vendor stands for the paid API only.

const REAL_KEY = 'sk-berth-k8s-allowlist-7c1e9b3a5d2f4e60';

describe('an installed agent in an allowlist phase on the Kubernetes sandbox', () => {
  let cluster: LocalCluster;
  let workers: TestCluster;
  let fake: FakeVendors;

  beforeAll(async () => {
    cluster = await useLocalCluster();
    fake = await startFakeVendors(REAL_KEY);
    Object.assign(process.env, { ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: fake.url, BERTH_GATEWAY_RETRY_BASE_MS: '50' });
    const provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    workers = await startTestWorkers('k8s-installed-allowlist', { provider });
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await workers?.stop();
    await fake?.close();
    await cluster?.release();
  }, 120_000);

  it('claude-code scores 1 on examples/hello with its agent phase an allowlist of one unrelated host, its calls through the gateway', async () => {
    const dataset = helloDataset();
    const toml = join(dataset, 'hello', 'task.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace('[agent]\ntimeout_sec = 120\n', '[agent]\ntimeout_sec = 120\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.invalid"]\n'));
    expect(readFileSync(toml, 'utf8')).toContain('network_mode = "allowlist"');
    const from = fake.reported.length;
    const handle = await startBatch({
      dataset, agent: 'claude-code', model: 'anthropic/claude-sonnet-4-5', client: workers.client, taskQueue: workers.taskQueue,
      resultsDir: mkdtempSync(`${tmpdir()}/berth-k8s-installed-allowlist-`),
    });
    const row = (await handle.wait()).rows[0]!;
    await handle.close();
    expect(row, row.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, failure_kind: null });
    expect(fake.reported.slice(from).filter((r) => !r.probe).length).toBeGreaterThanOrEqual(2);
  }, 900_000);
});
