import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { containerName, DockerSandboxProvider, KubernetesSandboxProvider, type SandboxHandle } from '../../src/sandbox/index.ts';
import type { ResultRow } from '../../src/workflows/types.ts';
import { FIRST_BUILD_TIMEOUT_MS, useLocalCluster, type LocalCluster } from '../helpers/kubernetes.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';

// A separate verifier on the Kubernetes sandbox (issue 23; Task Folder Verifiers § Shared and separate
// verification: the collect hooks run, the artifacts are copied out of the agent's sandbox, it is stopped, and test.sh
// runs in a fresh sandbox that gets the artifacts at their own paths). A pod cannot be stopped and started again:
// "stop" ends every process of it but the keep-alive, files kept (docs/kubernetes.md "A separate verifier").

const suffix = randomBytes(4).toString('hex');

// The agent leaves a file outside the artifacts and a process running; the verifier must see only the artifacts.
const TASK = {
  'sep/task.toml': [
    'artifacts = ["/app/out.txt", { source = "/data", exclude = ["*.log"] }]',
    '[environment]', 'docker_image = "berth-base:bookworm"', 'workdir = "/app"',
    '[agent]', 'timeout_sec = 60',
    '[verifier]', 'timeout_sec = 60', 'environment_mode = "separate"',
    '[verifier.environment]', 'docker_image = "berth-base:bookworm"', 'workdir = "/grading"',
    '[verifier.environment.env]', 'SANDBOX_VAR = "from-env-table"',
    '[[verifier.collect]]', 'command = "echo collected > /logs/artifacts/hook.txt"',
  ].join('\n'),
  'sep/instruction.md': 'Write out.txt.\n',
  'sep/solution/solve.sh': [
    '#!/bin/bash',
    'echo out > /app/out.txt',
    'mkdir -p /data && echo keep > /data/keep.txt && echo skip > /data/skip.log',
    'echo agent-only > /tmp/agent-only.txt',
    '(setsid sh -c "while :; do date >> /app/ticks; sleep 0.2; done" >/dev/null 2>&1 &)',
  ].join('\n'),
  'sep/tests/test.sh': [
    '#!/bin/bash',
    'r=0',
    '[ "$(cat /app/out.txt)" = out ] && r=$((r+1))',
    '[ "$(cat /data/keep.txt)" = keep ] && r=$((r+1))',
    '[ ! -e /data/skip.log ] && r=$((r+1))',
    '[ ! -e /tmp/agent-only.txt ] && [ ! -e /app/ticks ] && r=$((r+1))',
    '[ "$(cat /logs/artifacts/hook.txt)" = collected ] && r=$((r+1))',
    '[ "$(pwd)" = /grading ] && [ "$SANDBOX_VAR" = from-env-table ] && r=$((r+1))',
    'echo "{\\"reward\\": $([ $r = 6 ] && echo 1 || echo 0), \\"checks\\": $r}" > /logs/verifier/reward.json',
  ].join('\n'),
};

/** The processes of a sandbox (their command lines), as root. */
async function processes(provider: KubernetesSandboxProvider, handle: SandboxHandle): Promise<string[]> {
  const r = await provider.exec(handle, { command: 'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done', user: 'root' });
  return r.stdout.split('\n').map((l) => l.trim()).filter(Boolean);
}

describe('a separate verifier on the Kubernetes sandbox (real cluster, real Temporal)', () => {
  let cluster: LocalCluster;
  let provider: KubernetesSandboxProvider;
  let k8s: TestCluster;
  let docker: TestCluster;
  const made: string[] = [];

  beforeAll(async () => {
    cluster = await useLocalCluster();
    provider = new KubernetesSandboxProvider({ kubeConfig: cluster.kubeConfig, local: new DockerSandboxProvider(new Docker()), registryHost: cluster.registry });
    k8s = await startTestWorkers('k8s-separate', { provider });
    docker = await startTestWorkers('k8s-separate-docker');
  }, FIRST_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(made.map((n) => provider?.teardown(n).catch(() => undefined)));
    await k8s?.stop();
    await docker?.stop();
    await cluster?.release();
  }, 120_000);

  it('stop ends every process of the pod but its keep-alive and keeps its files; start finds it as docker start would', async () => {
    const workflowId = `berth/k8s-separate-${suffix}/stop/1`;
    const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
    made.push(name);
    const image = (await provider.images.ensure('berth-base:bookworm')).id;
    const { handle } = await provider.seed({ name, labels: { batch: `k8s-separate-${suffix}`, workflowId, role: 'agent' }, image, env: {}, network: 'bridge', workdir: '/app', user: 'nobody' });
    await provider.exec(handle, { command: 'echo kept > /app/file.txt; (setsid sh -c "trap \'\' TERM; while :; do sleep 0.2; done" >/dev/null 2>&1 &); (setsid sleep 600 >/dev/null 2>&1 &)' });
    const before = await processes(provider, handle);
    expect(before).toContain('sleep 600');
    expect(before.some((p) => p.includes('trap'))).toBe(true);

    await provider.stop(handle);
    const after = await processes(provider, handle);
    // Left: the keep-alive, the pod's pause process, and the exec that lists them.
    expect(after.filter((p) => p === 'sleep infinity')).toHaveLength(1);
    expect(after).not.toContain('sleep 600');
    expect(after.some((p) => p.includes('trap'))).toBe(false); // one that ignores TERM is killed
    expect((await provider.exec(handle, { command: 'cat /app/file.txt' })).stdout).toBe('kept\n');

    await provider.resume(handle);
    expect((await provider.inspect(handle)).running).toBe(true);
    expect((await provider.exec(handle, { command: 'cat /app/file.txt' })).stdout).toBe('kept\n');
    await provider.teardown(handle);
    // A pod that is gone stays so, as Docker's stop of a removed container.
    await expect(provider.stop(handle)).resolves.toBeUndefined();
  }, 120_000);

  it('a separate-verifier task scores as it does on Docker: only the artifacts reach the verifier\'s pod', async () => {
    const dataset = writeDataset(TASK);
    const run = async (w: TestCluster, what: string): Promise<ResultRow> => {
      const handle = await startBatch({ dataset, agent: 'oracle', client: w.client, taskQueue: w.taskQueue, resultsDir: mkdtempSync(join(tmpdir(), `berth-k8s-separate-${what}-`)) });
      const rows = (await handle.wait()).rows;
      await handle.close();
      return rows[0]!;
    };
    const [onK8s, onDocker] = await Promise.all([run(k8s, 'k8s'), run(docker, 'docker')]);
    expect(onK8s, onK8s.failure_reason ?? '').toMatchObject({ reward: 1, verifier_rewards: { reward: 1, checks: 6 }, failure_kind: null, mask_sample: false, verifier_mode: 'separate' });
    for (const key of ['reward', 'verifier_rewards', 'failure_kind', 'mask_sample', 'verifier_mode'] as const) expect(onK8s[key]).toEqual(onDocker[key]);
    // The artifacts came to the host as on Docker; no pod of the episode is left.
    expect(readFileSync(join(onK8s.logs_dir!, 'turn-1', 'artifacts', 'hook.txt'), 'utf8')).toBe('collected\n');
    const left = (await cluster.core.listNamespacedPod({ namespace: 'default', labelSelector: 'berth.sandbox' })).items
      .filter((p) => p.metadata?.annotations?.['berth.workflow'] === onK8s.workflow_id);
    expect(left).toEqual([]);
  }, 600_000);
});
