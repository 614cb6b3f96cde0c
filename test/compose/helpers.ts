import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GroupSpec } from '../../src/sandbox/driver.ts';
import { DockerDriver } from '../../src/sandbox/docker/driver.ts';
import { parseCidr } from '../../src/sandbox/docker/subnets.ts';
import { runExec } from '../../src/sandbox/exec.ts';
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
