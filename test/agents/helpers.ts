// Test-only glue: seeding sandboxes for tasks (through the production seed, seedAgentSandbox),
// turn contexts, temp task folders, and running a task's test.sh by hand.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AgentTurnContext } from '../../src/agents/index.ts';
import { sandboxDeps } from '../../src/host/deps.ts';
import { seedAgentSandbox } from '../../src/host/seed-agent.ts';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { containerName } from '../../src/sandbox/names.ts';
import type { SandboxHandle, SandboxSpec } from '../../src/sandbox/types.ts';
import { loadTask, type Task } from '../../src/task/index.ts';

export const BASE_IMAGE = 'berth-base:bookworm';
export const ALIASES = {
  'ubuntu:24.04': BASE_IMAGE,
  'ubuntu:22.04': BASE_IMAGE,
  'python:3.12-slim': BASE_IMAGE,
  'python:3.13-slim': BASE_IMAGE,
};
export { CORPUS } from '../helpers/corpus.ts';

export const provider = new DockerSandboxProvider();

function baseSpec(made: string[]): Pick<SandboxSpec, 'name' | 'labels'> {
  const workflowId = `berth/vitest-agents/${randomBytes(4).toString('hex')}/0`;
  const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
  made.push(name);
  return { name, labels: { batch: 'vitest-agents', workflowId, role: 'agent' } };
}

/** A plain sandbox of the base image; `made` collects names for teardownAll. */
export async function seedPlain(made: string[], overrides: Partial<SandboxSpec> = {}): Promise<SandboxHandle> {
  const spec: SandboxSpec = { ...baseSpec(made), image: BASE_IMAGE, env: {}, network: 'none', ...overrides };
  return (await provider.seed(spec)).handle;
}

/** A plain sandbox whose default user is `agent` (made by an overlay line), working in /work. */
export function seedAsAgentUser(made: string[]): Promise<SandboxHandle> {
  return seedPlain(made, {
    workdir: '/work',
    user: 'agent',
    overlay: { timeoutSec: 60, runs: [{ command: 'useradd -m agent', env: {}, workdir: '/', user: 'root' }] },
  });
}

/** The agent sandbox of a loaded task, seeded as the seed activity seeds it. */
export async function seedTask(made: string[], task: Task): Promise<SandboxHandle> {
  const { name, labels } = baseSpec(made);
  const logsDir = await mkdtemp(join(tmpdir(), 'berth-agents-logs-'));
  const { handle } = await seedAgentSandbox(sandboxDeps(provider), task, { name, labels, imageAliases: ALIASES, hostEnv: process.env, logsDir, hidden: () => [] });
  return handle;
}

export async function teardownAll(made: string[]): Promise<void> {
  await Promise.all(made.splice(0).map((n) => provider.teardown(n)));
}

export async function sh(handle: SandboxHandle, command: string, user = 'root'): Promise<string> {
  const res = await provider.exec(handle, { command, user, workdir: '/' });
  if (res.exitCode !== 0) throw new Error(`${command} failed (${res.exitCode}): ${res.stderr}`);
  return res.stdout;
}

export async function tempDir(prefix = 'berth-agents-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Writes a task folder from relative paths to contents; returns its path. */
export async function writeTask(files: Record<string, string | Buffer>): Promise<string> {
  const root = await tempDir('berth-agents-task-');
  const dir = join(root, 'task');
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  return dir;
}

export async function loadTestTask(path: string): Promise<Task> {
  return loadTask(path, { imageAliases: ALIASES, logger: { warn: () => {} } });
}

export async function makeCtx(handle: SandboxHandle, task: Task, over: Partial<AgentTurnContext> = {}): Promise<AgentTurnContext> {
  const stepIndex = over.stepIndex ?? 0;
  const step = task.multi_step ? task.steps[stepIndex] : undefined;
  const user = step?.agent.user ?? task.agent.user;
  return {
    provider,
    handle,
    task,
    stepIndex,
    instruction: step?.instruction ?? task.instruction ?? '',
    user: user === null ? handle.user : String(user),
    workdir: handle.workdir,
    env: {},
    timeoutSec: step?.agent.timeout_sec ?? task.agent.timeout_sec,
    runKey: `run${randomBytes(4).toString('hex')}-t${stepIndex + 1}`,
    logsDir: await tempDir('berth-agents-logs-'),
    args: {},
    heartbeat: () => {},
    ...over,
  };
}

/** Uploads the turn's tests and runs test.sh the way the shared verifier does; returns reward.txt's text. */
export async function verifyTurn(handle: SandboxHandle, task: Task, stepIndex = 0): Promise<string> {
  const step = task.multi_step ? task.steps[stepIndex] : undefined;
  const dirs = step ? step.verifier.tests_dirs : [task.verifier.tests_dir!];
  await sh(handle, 'rm -rf /tests && mkdir -p /tests && find /logs/verifier -mindepth 1 -delete');
  for (const d of dirs) await provider.upload(handle, d, '/tests');
  const user = step?.verifier.user ?? task.verifier.user;
  await provider.exec(handle, {
    command: 'bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1',
    user: user === null ? 'root' : String(user),
    timeoutSec: 60,
  });
  return (await sh(handle, 'cat /logs/verifier/reward.txt 2>/dev/null || true')).trim();
}
