import Docker from 'dockerode';
import type { Client } from '@temporalio/client';
import { removeGroup } from '../../src/sandbox/docker/compose-group.ts';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GroupSpec } from '../../src/sandbox/driver.ts';
import { DockerDriver } from '../../src/sandbox/docker/driver.ts';
import { parseCidr } from '../../src/sandbox/docker/subnets.ts';
import { runExec } from '../../src/sandbox/docker/exec.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { writeDataset } from '../helpers/tasks.ts';

export const BASE_IMAGE = 'berth-base:bookworm';
/** A range no other test allocates from, so these tests never contend with others for subnets. */
export const TEST_POOL = '10.251.0.0/20';

export function testDriver(): DockerDriver {
  return new DockerDriver({
    subnets: { kind: 'range', pool: parseCidr(TEST_POOL), size: 24 },
    groupsDir: mkdtempSync(join(tmpdir(), 'berth-groups-')),
  });
}

export function uniqueProject(what: string): string {
  return `berth-test-${what}-${randomBytes(4).toString('hex')}`;
}

/** A folder holding environment/docker-compose.yaml (plus any other files), as a task would. */
export function composeFolder(compose: string, files: Record<string, string> = {}): { dir: string; file: string; projectDir: string } {
  const dir = writeDataset({ 'environment/docker-compose.yaml': compose, ...files });
  return { dir, file: join(dir, 'environment', 'docker-compose.yaml'), projectDir: join(dir, 'environment') };
}

export function groupSpec(project: string, folder: { file: string; projectDir: string }, over: Partial<GroupSpec> = {}): GroupSpec {
  return {
    project,
    labels: { batch: 'test-batch', workflowId: `berth/test/${project}`, role: 'agent' },
    composeFile: folder.file,
    projectDir: folder.projectDir,
    interpolationEnv: { ...process.env },
    main: { image: BASE_IMAGE, keepAlive: ['/bin/sh', '-c', 'exec sleep infinity'], env: {}, user: 'root', workdir: '/' },
    prepareImages: async () => ({}),
    internal: false,
    waitTimeoutSec: 60,
    ...over,
  };
}

export async function sh(handle: SandboxHandle, command: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await runExec(new Docker(), handle, { argv: ['sh', '-c', command], timeoutSec: 30 });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

/** Containers, networks and volumes still carrying the project's group label. */
export async function leftovers(project: string): Promise<string[]> {
  const docker = new Docker();
  const filters = { label: [`berth.group=${project}`] };
  const out: string[] = [];
  for (const c of await docker.listContainers({ all: true, filters })) out.push(`container ${c.Names[0]}`);
  for (const n of await docker.listNetworks({ filters })) out.push(`network ${n.Name}`);
  for (const v of (await docker.listVolumes({ filters })).Volumes ?? []) out.push(`volume ${v.Name}`);
  return out;
}

/** Waits (bounded) until nothing with the label is left: containers, networks and volumes alike. */
export async function groupLeftovers(label: string, expected: string[] = [], timeoutMs = 20_000): Promise<void> {
  const docker = new Docker();
  const deadline = Date.now() + timeoutMs;
  let left: string[] = [];
  for (;;) {
    const filters = { label: [label] };
    left = [
      ...(await docker.listContainers({ all: true, filters })).map((c) => `container ${c.Names[0]}`),
      ...(await docker.listNetworks({ filters })).map((n) => `network ${n.Name}`),
      ...((await docker.listVolumes({ filters })).Volumes ?? []).map((v) => `volume ${v.Name}`),
    ];
    if (left.length === expected.length || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  if (left.length !== expected.length) throw new Error(`still there for ${label}: ${left.join(', ')}`);
}

/** Runs argv in a container and waits for it to end: true when it exited 0 (false when the container is not running). */
export async function execOk(containerId: string, argv: string[]): Promise<boolean> {
  const docker = new Docker();
  try {
    const ex = await docker.getContainer(containerId).exec({ Cmd: argv, AttachStdout: true, AttachStderr: true });
    const stream = await ex.start({ hijack: true, stdin: false });
    await new Promise<void>((resolve) => { stream.on('end', resolve); stream.on('close', resolve); stream.resume(); });
    for (let i = 0; i < 100; i++) {
      const info = await ex.inspect();
      if (!info.Running) return info.ExitCode === 0;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  } catch {
    return false;
  }
}

/** After a failed test: the batch's episodes terminated and every group it left removed, so nothing lingers. */
export async function cleanUpBatch(client: Client, batchId: string): Promise<void> {
  const docker = new Docker();
  const cs = await docker.listContainers({ all: true, filters: { label: [`berth.batch=${batchId}`] } });
  for (const wf of new Set(cs.map((c) => c.Labels['berth.workflow']!))) await client.workflow.getHandle(wf).terminate('test cleanup').catch(() => undefined);
  await client.workflow.getHandle(`berth/${batchId}`).terminate('test cleanup').catch(() => undefined);
  const projects = new Set([
    ...cs.map((c) => c.Labels['berth.group']),
    ...(await docker.listNetworks({ filters: { label: [`berth.batch=${batchId}`] } })).map((n) => n.Labels?.['berth.group']),
  ].filter((p): p is string => Boolean(p)));
  for (const p of projects) await removeGroup(docker, p);
  for (const c of cs.filter((x) => !x.Labels['berth.group'])) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
}
