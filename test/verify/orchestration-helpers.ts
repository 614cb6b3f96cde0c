// Test-only helpers for the verification orchestration tests: temporary task folders, sandboxes seeded through the
// production seed (seedAgentSandbox), sandboxes from berth-base, and a VerifyContext builder.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sandboxDeps } from '../../src/host/deps.ts';
import { seedAgentSandbox } from '../../src/host/seed-agent.ts';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { containerName } from '../../src/sandbox/names.ts';
import type { SandboxHandle, SandboxSpec } from '../../src/sandbox/types.ts';
import { loadTask, type Task } from '../../src/task/index.ts';
import { oracleTrajectory } from '../../src/trajectory/atif.ts';
import type { VerifyContext } from '../../src/verify/context.ts';

export const BASE_IMAGE = 'berth-base:bookworm';
export const TEST_BATCH = 'vitest-verify';
export const provider = new DockerSandboxProvider();
const quiet = { warn: () => {} };

/** Owns the temporary folders and containers of one test file; `cleanup()` removes them all. */
export class Fixture {
  readonly containers: string[] = [];
  readonly dirs: string[] = [];

  tmp(prefix = 'berth-verify-'): string {
    const d = mkdtempSync(join(tmpdir(), prefix));
    this.dirs.push(d);
    return d;
  }

  /** A dataset folder holding one task folder built from `files` (relative path → content; `+x:` prefix = 0755). */
  async task(files: Record<string, string>, opts: { datasetFiles?: Record<string, string>; id?: string } = {}): Promise<Task> {
    const root = this.tmp('berth-verify-ds-');
    const id = opts.id ?? `t-${randomBytes(3).toString('hex')}`;
    const dir = join(root, id);
    const all: Record<string, string> = { 'instruction.md': 'Do the task.\n', ...files };
    for (const [rel, content] of Object.entries(all)) writeFile(join(dir, rel), content);
    for (const [rel, content] of Object.entries(opts.datasetFiles ?? {})) writeFile(join(root, rel), content);
    return loadTask(dir, { logger: quiet });
  }

  async seed(overrides: Partial<SandboxSpec> = {}): Promise<SandboxHandle> {
    const spec = this.spec(overrides);
    return (await provider.seed(spec)).handle;
  }

  spec(overrides: Partial<SandboxSpec> = {}): SandboxSpec {
    const workflowId = `berth/${TEST_BATCH}/${randomBytes(4).toString('hex')}/0`;
    const name = containerName(workflowId, randomBytes(4).toString('hex'), 'agent');
    this.containers.push(name);
    return { name, labels: { batch: TEST_BATCH, workflowId, role: 'agent' }, image: BASE_IMAGE, env: {}, network: 'none', ...overrides };
  }

  /** The agent sandbox for a loaded task, seeded as the seed activity seeds it. */
  async seedTask(task: Task): Promise<SandboxHandle> {
    const { name, labels } = this.spec();
    const { handle } = await seedAgentSandbox(sandboxDeps(provider), task, { name, labels, imageAliases: {}, hostEnv: process.env, logsDir: this.tmp('berth-verify-logs-'), hidden: () => [] });
    return handle;
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.containers.splice(0).map((n) => provider.teardown(n)));
    for (const d of this.dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}

function writeFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const exec = content.startsWith('+x:');
  writeFileSync(path, exec ? content.slice(3) : content);
  chmodSync(path, exec ? 0o755 : 0o644);
}

export function trajectory(): VerifyContext['trajectory'] {
  return oracleTrajectory({ sessionId: 'verify-test', instruction: 'Do the task.', command: 'bash /solution/solve.sh', output: 'ok' });
}

export function context(fx: Fixture, task: Task, agent: SandboxHandle, overrides: Partial<VerifyContext> = {}): VerifyContext {
  const logsDir = fx.tmp('berth-verify-logs-');
  const workflowId = `berth/${TEST_BATCH}/${task.id}/${randomBytes(3).toString('hex')}`;
  return {
    provider,
    agent,
    task,
    stepIndex: null,
    logsDir,
    trajectory: trajectory(),
    responseText: 'the answer',
    naming: { workflowId, runId: randomBytes(6).toString('hex'), batchId: TEST_BATCH },
    hostEnv: {},
    secrets: {},
    heartbeat: () => {},
    ...overrides,
  };
}

/** Runs a shell command in the sandbox as root (or `user`) and returns stdout; throws on a non-zero exit. */
export async function sh(handle: SandboxHandle, command: string, user = 'root'): Promise<string> {
  const res = await provider.exec(handle, { command, user });
  if (res.exitCode !== 0) throw new Error(`${command} failed (${res.exitCode}): ${res.stderr}${res.stdout}`);
  return res.stdout;
}

export interface ShTaskOptions {
  timeoutSec?: number;
  /** Lines added inside [verifier]. */
  verifier?: string;
  /** Tables added after [verifier]. */
  extra?: string;
  /** Top-level keys (before any table). */
  top?: string;
  files?: Record<string, string>;
}

/** A task whose verifier is `test.sh` with the given body. */
export function shTask(fx: Fixture, body: string, o: ShTaskOptions = {}): Promise<Task> {
  const toml = [
    o.top ?? '',
    '[environment]',
    `docker_image = "${BASE_IMAGE}"`,
    '[verifier]',
    `timeout_sec = ${o.timeoutSec ?? 20}`,
    o.verifier ?? '',
    o.extra ?? '',
  ].join('\n');
  return fx.task({ 'task.toml': toml, 'tests/test.sh': `#!/bin/bash\n${body}\n`, ...o.files });
}

/** Builds (once; content-hashed by tag) a small image from berth-base with a RUN line, e.g. deleting a tool. */
export async function derivedImage(fx: Fixture, tag: string, run: string): Promise<string> {
  const dir = fx.tmp('berth-verify-img-');
  writeFileSync(join(dir, 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN ${run}\n`);
  await provider.images.build({ contextDir: dir, tag });
  return tag;
}
