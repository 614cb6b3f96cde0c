import { randomBytes } from 'node:crypto';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { containerName } from '../../src/sandbox/names.ts';
import type { SandboxHandle, SandboxSpec } from '../../src/sandbox/types.ts';

export const BASE_IMAGE = 'berth-base:bookworm';
export const TEST_BATCH = 'vitest-sandbox';

export const provider = new DockerSandboxProvider();

/** A spec with a unique container name; `made` collects names so the test file can tear them down. */
export function makeSpec(made: string[], overrides: Partial<SandboxSpec> = {}): SandboxSpec {
  const workflowId = `berth/${TEST_BATCH}/${randomBytes(4).toString('hex')}/0`;
  const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
  made.push(name);
  return {
    name,
    labels: { batch: TEST_BATCH, workflowId, role: 'agent' },
    image: BASE_IMAGE,
    env: {},
    network: 'none',
    ...overrides,
  };
}

export async function teardownAll(made: string[]): Promise<void> {
  await Promise.all(made.splice(0).map((n) => provider.teardown(n)));
}

export async function sh(handle: SandboxHandle, command: string, user = 'root'): Promise<string> {
  const res = await provider.exec(handle, { command, user });
  if (res.exitCode !== 0) throw new Error(`${command} failed (${res.exitCode}): ${res.stderr}`);
  return res.stdout;
}
