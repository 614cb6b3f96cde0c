import { ApplicationFailure } from '@temporalio/activity';
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { homePath } from '../server/paths.ts';
import type { EpisodeInput, EpisodePlan, SandboxRef, TurnOutcome } from '../workflows/types.ts';
import { createOrAdopt, exec, putDir, readText, remove } from './docker-lite.ts';
import { hostIdentity } from './host-identity.ts';
import { readLiteTask } from './task-lite.ts';
import { workerSlots } from './worker-state.ts';

interface TurnRequest {
  input: EpisodeInput;
  plan: EpisodePlan;
  sandbox: SandboxRef;
  turn: number;
}

const containerName = (workflowId: string, runId: string, role: string) =>
  `berth-${workflowId.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 120)}-${runId.slice(0, 8)}-${role}`;

function lost(err: unknown): never {
  throw ApplicationFailure.nonRetryable(`sandbox lost: ${(err as Error).message}`, 'provider_unavailable');
}

export async function seed(req: { input: EpisodeInput; plan: EpisodePlan; workflowId: string; runId: string }): Promise<SandboxRef> {
  const { host } = await hostIdentity();
  const task = readLiteTask(req.input.taskPath);
  const container = containerName(req.workflowId, req.runId, 'agent');
  const logsDir = homePath('episodes', req.workflowId.replace(/[^A-Za-z0-9_.-]+/g, '_'), req.runId);
  mkdirSync(logsDir, { recursive: true });
  try {
    await createOrAdopt(container, req.plan.image, {
      'berth.batch': req.input.batchId, 'berth.workflow': req.workflowId, 'berth.role': 'agent',
    }, task.workdir);
    const r = await exec(container, `mkdir -p '${task.workdir}' /logs/agent /logs/verifier /logs/artifacts && chmod 777 /logs/agent /logs/verifier /logs/artifacts`);
    if (r.exitCode !== 0) throw ApplicationFailure.nonRetryable(`seed failed: ${r.output}`, 'harbor:seed_failed');
  } catch (err) {
    if (err instanceof ApplicationFailure) throw err;
    if ((err as any)?.statusCode === 404 && /image/i.test(String((err as Error).message))) {
      throw ApplicationFailure.nonRetryable(`image ${req.plan.image} is missing; map it to a local image with --image-alias ${req.plan.image}=berth-base:bookworm`, 'harbor:seed_failed');
    }
    throw err;
  }
  return { container, host, logsDir };
}

export async function agentTurn(req: TurnRequest): Promise<{ responseText: string; exitCode: number; timings: Record<string, number> }> {
  const task = readLiteTask(req.input.taskPath);
  const step = req.plan.steps[req.turn]!;
  if (req.input.agent === 'nop') return { responseText: '', exitCode: 0, timings: {} };
  const solution = join(req.input.taskPath, 'solution');
  if (!existsSync(join(solution, 'solve.sh'))) return { responseText: '', exitCode: 0, timings: {} };
  try {
    await putDir(req.sandbox.container, solution, '/solution');
    const r = await exec(req.sandbox.container, 'bash /solution/solve.sh > /logs/agent/oracle.txt 2>&1', {
      workdir: task.workdir, env: { DEBIAN_FRONTEND: 'noninteractive' }, timeoutSec: step.agentTimeoutSec,
    });
    return { responseText: '', exitCode: r.exitCode, timings: {} };
  } catch (err) {
    if ((err as any)?.statusCode === 404 || (err as any)?.statusCode === 409) lost(err);
    throw err;
  }
}

export async function verifyTurn(req: TurnRequest & { responseText: string; agentTimings: Record<string, number> }): Promise<TurnOutcome> {
  const task = readLiteTask(req.input.taskPath);
  const step = req.plan.steps[req.turn]!;
  const started = Date.now();
  try {
    await exec(req.sandbox.container, 'rm -rf /tests /logs/verifier/* && mkdir -p /tests');
    await putDir(req.sandbox.container, join(req.input.taskPath, 'tests'), '/tests');
    const r = await exec(req.sandbox.container, 'bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1', {
      workdir: task.workdir, timeoutSec: step.verifierTimeoutSec,
    });
    const stdout = (await readText(req.sandbox.container, '/logs/verifier/test-stdout.txt')) ?? '';
    writeFileSync(join(req.sandbox.logsDir, 'test-stdout.txt'), stdout);
    const text = await readText(req.sandbox.container, '/logs/verifier/reward.txt');
    const timings = { verify: (Date.now() - started) / 1000 };
    const base = { step: step.name, verifier_rewards: {}, masked: false, response_text: req.responseText, timings };
    if (text === undefined) {
      const kind = r.exitCode === 124 ? 'harbor:verifier_timeout' : 'harbor:missing_reward';
      return { ...base, reward: 0, failure_kind: kind, failure_reason: `no reward file; test-stdout tail: ${stdout.slice(-500)}` };
    }
    const reward = Number(text.trim());
    if (text.trim() === '' || !Number.isFinite(reward)) {
      return { ...base, reward: 0, failure_kind: 'harbor:invalid_reward', failure_reason: `reward.txt is not a number: ${JSON.stringify(text.slice(0, 100))}` };
    }
    return { ...base, reward, verifier_rewards: { reward }, failure_kind: null, failure_reason: null };
  } catch (err) {
    if ((err as any)?.statusCode === 404 || (err as any)?.statusCode === 409) lost(err);
    throw err;
  }
}

export async function teardown(req: { sandbox: SandboxRef; episodeId: string }): Promise<void> {
  await remove(req.sandbox.container);
  workerSlots().release(req.episodeId);
}
