// Sidecars need no shell (issue 22): artifacts come out of any service through the engine's archive API (as
// `docker compose cp` reads them: GET /containers/{id}/archive), whatever its image holds; a sidecar's collect hook
// runs under `sh -c`, as Gym runs hooks; a service with no shell at all fails the hook with a message that says so.
// Harbor 0.25 copies a sidecar's artifact with `docker compose cp` and scores the task 1; Berth gave 0.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatch } from '../../src/client/batch.ts';
import { DockerSandboxProvider, type SandboxHandle } from '../../src/sandbox/index.ts';
import type { Artifact } from '../../src/task/index.ts';
import { copyArtifactsOut, MANIFEST } from '../../src/verify/artifacts.ts';
import { runCollectHooks } from '../../src/verify/collect.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { writeDataset } from '../helpers/tasks.ts';
import { BASE_IMAGE, cleanUpBatch, composeFolder, groupSpec, testDriver, uniqueProject } from './helpers.ts';
import { BUSYBOX_IMAGE, ensureShelllessImages, NO_SHELL_IMAGE } from './shellless-images.ts';

const provider = new DockerSandboxProvider();

const GROUP = `
services:
  main: {}
  bb:
    image: ${BUSYBOX_IMAGE}
    command: ["sh", "-c", "mkdir -p /data/dir && echo from-bb > /data/out.txt && echo nested > /data/dir/a.txt && exec sleep infinity"]
  bare:
    image: ${NO_SHELL_IMAGE}
    command: ["/busybox", "sh", "-c", "echo from-bare > /data/bare.txt; exec /busybox sleep infinity"]
  oneshot:
    image: ${NO_SHELL_IMAGE}
    command: ["/busybox", "sh", "-c", "echo done > /data/done.txt"]
`;

async function runExecIn(h: SandboxHandle, command: string): Promise<void> {
  const r = await provider.exec(h, { command, user: 'root' });
  if (r.exitCode !== 0) throw new Error(r.stderr);
}

const artifact = (source: string, service: string, more: Partial<Artifact> = {}): Artifact => ({ source, service, destination: null, exclude: [], ...more });

describe('artifacts and hooks on services without bash', () => {
  const driver = testDriver();
  const project = uniqueProject('shellless');
  let services: Record<string, SandboxHandle>;
  beforeAll(async () => {
    await ensureShelllessImages();
    const r = await driver.createOrAdoptGroup(groupSpec(project, composeFolder(GROUP)));
    services = { ...r.group.services };
  }, 120_000);
  afterAll(() => driver.remove({ name: project, kind: 'group' }));

  it('copies files and folders out of a busybox, a shell-less and an exited shell-less service', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-shellless-'));
    const warnings: string[] = [];
    const copied = await copyArtifactsOut(provider, services.main!, [
      artifact('/data/out.txt', 'bb'),
      artifact('/data/dir', 'bb'),
      artifact('/data/bare.txt', 'bare'),
      artifact('/data/done.txt', 'oneshot', { destination: 'oneshot/done.txt' }),
      artifact('/data/missing.txt', 'bare'),
    ], dir, warnings, true, { services });
    expect(readFileSync(join(dir, 'data/out.txt'), 'utf8')).toBe('from-bb\n');
    expect(readFileSync(join(dir, 'data/dir/a.txt'), 'utf8')).toBe('nested\n');
    expect(readFileSync(join(dir, 'data/bare.txt'), 'utf8')).toBe('from-bare\n');
    expect(readFileSync(join(dir, 'oneshot/done.txt'), 'utf8')).toBe('done\n');
    expect(copied.map((c) => c.source)).toEqual(expect.arrayContaining(['/data/out.txt', '/data/dir', '/data/bare.txt', '/data/done.txt']));
    expect(warnings).toEqual(['artifact /data/missing.txt does not exist in the agent\'s sandbox; nothing was copied']);
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Array<{ source: string; status: string; type: string | null }>;
    expect(manifest.find((m) => m.source === '/data/dir')).toMatchObject({ status: 'ok', type: 'dir' });
  });

  it('applies exclude patterns on the host, as tar --exclude would, for a service with neither shell nor tar', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-shellless-x-'));
    const warnings: string[] = [];
    await copyArtifactsOut(provider, services.main!, [
      artifact('/data', 'bb', { exclude: ['out.txt'], destination: 'bbdata' }),
      artifact('/data', 'bare', { exclude: ['*.txt'], destination: 'baredata' }),
    ], dir, warnings, true, { services });
    expect(warnings).toEqual([]);
    expect(readFileSync(join(dir, 'bbdata/dir/a.txt'), 'utf8')).toBe('nested\n');
    expect(existsSync(join(dir, 'bbdata/out.txt'))).toBe(false);
    expect(existsSync(join(dir, 'baredata'))).toBe(true);
    expect(existsSync(join(dir, 'baredata/bare.txt'))).toBe(false);
  });

  // Harbor 0.25: all services share one tree and the first claimant wins, main's entries first.
  it('where two services declare the same path, the first claimant wins and the later one is skipped, saying so', async () => {
    await runExecIn(services.main!, 'mkdir -p /data && echo from-main > /data/out.txt');
    const dir = mkdtempSync(join(tmpdir(), 'berth-claims-'));
    const warnings: string[] = [];
    await copyArtifactsOut(provider, services.main!, [
      artifact('/data/bare.txt', 'bare', { destination: 'same.txt' }),
      artifact('/data/out.txt', 'bb'),
      artifact('/data/out.txt', 'main'),
      artifact('/data/done.txt', 'oneshot', { destination: 'same.txt' }),
    ], dir, warnings, true, { services });
    expect(readFileSync(join(dir, 'data/out.txt'), 'utf8')).toBe('from-main\n');
    expect(readFileSync(join(dir, 'same.txt'), 'utf8')).toBe('from-bare\n');
    expect(warnings).toEqual([
      'artifact /data/out.txt of service "bb" lands at data/out.txt, which /data/out.txt of service "main" claimed first; it was not copied (the first claimant wins)',
      'artifact /data/done.txt of service "oneshot" lands at same.txt, which /data/bare.txt of service "bare" claimed first; it was not copied (the first claimant wins)',
    ]);
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Array<{ source: string; service: string; status: string }>;
    expect(manifest.filter((m) => m.status === 'skipped').map((m) => m.service)).toEqual(['bb', 'oneshot']);
  });

  it('runs a sidecar hook under sh (no bash there), and a hook on a service without sh fails naming the missing shell', async () => {
    const warnings: string[] = [];
    const hook = (service: string, command: string) => ({ command, service, timeout_sec: 20, user: null });
    await runCollectHooks(provider, services.main!, [hook('bb', 'test ! -e /bin/bash && echo hooked > /data/hook.txt')], warnings, () => {}, services);
    expect(warnings).toEqual([]);
    expect((await provider.pathKind(services.bb!, '/data/hook.txt'))).toBe('file');
    await expect(runCollectHooks(provider, services.main!, [hook('bare', 'echo x')], warnings, () => {}, services))
      .rejects.toThrow(/service "bare" has no shell \(no \/bin\/sh in its image\)/);
  });
});

describe('the issue\'s task: a bash-less sidecar\'s artifact reaches the separate verifier', () => {
  let cluster: TestCluster;
  let batchId: string | undefined;
  beforeAll(async () => {
    await ensureShelllessImages();
    cluster = await startTestWorkers('shellless-sidecar');
  }, 120_000);
  afterAll(async () => {
    if (batchId) await cleanUpBatch(cluster.client, batchId);
    await cluster?.stop();
  });

  it('scores 1, as Harbor 0.25 does', async () => {
    const dataset = writeDataset({
      'side/task.toml': `artifacts = [{ source = "/data/report.txt", service = "api" }]\n[environment]\ndocker_image = "${BASE_IMAGE}"\n` +
        `[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\nenvironment_mode = "separate"\n` +
        `[[verifier.collect]]\nservice = "api"\ncommand = "echo collected >> /data/report.txt"\n` +
        `[verifier.environment]\ndocker_image = "${BASE_IMAGE}"\n`,
      'side/instruction.md': 'Make the api write its report.\n',
      'side/environment/docker-compose.yaml': `services:\n  api:\n    image: ${BUSYBOX_IMAGE}\n    command: ["sh", "-c", "echo report-ok > /data/report.txt; exec sleep infinity"]\n`,
      'side/solution/solve.sh': '#!/bin/bash\ntrue\n',
      'side/tests/test.sh': '#!/bin/bash\nif [ "$(cat /data/report.txt)" = "$(printf \'report-ok\\ncollected\')" ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
    });
    const handle = await startBatch({ dataset, resultsDir: mkdtempSync(join(tmpdir(), 'berth-shellless-e2e-')), taskQueue: cluster.taskQueue, client: cluster.client });
    batchId = handle.batchId;
    const [row] = (await handle.wait()).rows;
    expect(row, row!.failure_reason ?? '').toMatchObject({ reward: 1, mask_sample: false, verifier_mode: 'separate' });
  }, 240_000);
});
