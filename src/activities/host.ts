import { Context, heartbeat } from '@temporalio/activity';
import { mkdirSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { containerName, type SandboxHandle } from '../sandbox/index.ts';
import { templateEnv, type Task } from '../task/index.ts';
import { scoreVerifierOutput } from '../verify/reward.ts';
import type { EpisodeInput, EpisodePlan, SandboxRef, TurnOutcome } from '../workflows/types.ts';
import { typed } from './failures.ts';
import { hostIdentity } from './host-identity.ts';
import { prepareImage } from './image-prep.ts';
import { episodeLogsDir, turnLogsDir } from './logs.ts';
import { loadEpisodeTask, sandboxProvider } from './runtime.ts';
import { agentSandboxSpec } from './sandbox-spec.ts';
import { seedFailure } from './seed-failure.ts';
import { workerSlots } from './worker-state.ts';

export interface TurnRequest {
  input: EpisodeInput;
  plan: EpisodePlan;
  sandbox: SandboxRef;
  turn: number;
}

/** Heartbeats while a long call runs, so a dead host is noticed by its heartbeat timeout. */
async function beating<T>(fn: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => heartbeat(), 5000);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

export const handleOf = (ref: SandboxRef): SandboxHandle =>
  ({ name: ref.container, containerId: ref.containerId, user: ref.user, workdir: ref.workdir });

function environmentOf(task: Task): Record<string, string> {
  const result = templateEnv(task.environment.env, process.env);
  if ('missing' in result) throw seedFailure(`${task.path}/task.toml: [environment].env needs the variable ${result.missing}, which is not set on this worker. Set it in the worker's environment.`);
  return result.values;
}

/** Create-or-adopt the agent's sandbox: image ready, container started, overlay, entrypoint, healthcheck. */
export async function seed(req: { input: EpisodeInput; plan: EpisodePlan; workflowId: string; runId: string }): Promise<SandboxRef> {
  return typed(() => beating(async () => {
    const { host } = await hostIdentity();
    const task = await loadEpisodeTask(req.input);
    const taskEnv = environmentOf(task);
    const provider = sandboxProvider();
    const prepared = await prepareImage(provider.docker, provider, task, req.input.imageAliases);
    const name = containerName(req.workflowId, req.runId, 'agent');
    const spec = agentSandboxSpec(task, prepared, {
      name, taskEnv, labels: { batch: req.input.batchId, workflowId: req.workflowId, role: 'agent' },
    });
    const { handle } = await provider.seed(spec);
    if (task.image.upload_environment_files && existsSync(join(task.path, 'environment'))) {
      await provider.upload(handle, join(task.path, 'environment'), handle.workdir, { owner: handle.user });
    }
    const logsDir = episodeLogsDir(req.workflowId, req.runId);
    mkdirSync(logsDir, { recursive: true });
    return { container: handle.name, containerId: handle.containerId, host, user: handle.user, workdir: handle.workdir, logsDir };
  }));
}

export async function agentTurn(req: TurnRequest): Promise<{ responseText: string; exitCode: number | null; timings: Record<string, number> }> {
  return typed(() => beating(async () => {
    const started = Date.now();
    const task = await loadEpisodeTask(req.input);
    const step = req.plan.steps[req.turn]!;
    if (req.input.agent === 'nop') return { responseText: '', exitCode: null, timings: { agent: 0 } };
    const provider = sandboxProvider();
    const handle = handleOf(req.sandbox);
    const solutionDir = task.multi_step ? task.steps[req.turn]?.solution?.dir : task.solution.dir;
    if (!solutionDir || !existsSync(join(solutionDir, 'solve.sh'))) return { responseText: '', exitCode: null, timings: { agent: 0 } };
    await provider.exec(handle, { command: 'rm -rf /solution && mkdir -p /solution', user: 'root' });
    await provider.upload(handle, solutionDir, '/solution');
    const key = `${Context.current().info.workflowExecution?.runId ?? "run"}-t${req.turn + 1}`;
    await provider.startDetached(handle, {
      key, command: 'bash /solution/solve.sh', env: { DEBIAN_FRONTEND: 'noninteractive' },
      timeoutSec: step.agentTimeoutSec, outputPath: '/logs/agent/oracle.txt',
    });
    const done = await provider.waitDetached(handle, key, { pollMs: 200, onPoll: () => heartbeat() });
    return { responseText: '', exitCode: done.exitCode, timings: { agent: (Date.now() - started) / 1000 } };
  }));
}

export async function verifyTurn(req: TurnRequest & { responseText: string; agentTimings: Record<string, number> }): Promise<TurnOutcome> {
  return typed(() => beating(async () => {
    const started = Date.now();
    const task = await loadEpisodeTask(req.input);
    const step = task.multi_step ? task.steps[req.turn] : undefined;
    const provider = sandboxProvider();
    const handle = handleOf(req.sandbox);
    const dirs = step ? step.verifier.tests_dirs : task.verifier.tests_dir ? [task.verifier.tests_dir] : [];
    await provider.exec(handle, { command: 'rm -rf /tests && mkdir -p /tests && find /logs/verifier -mindepth 1 -delete', user: 'root' });
    for (const dir of dirs) await provider.upload(handle, dir, '/tests');
    const timeoutSec = step ? step.verifier.timeout_sec : task.verifier.timeout_sec;
    const user = step?.verifier.user ?? task.verifier.user;
    const run = await provider.exec(handle, {
      command: 'bash /tests/test.sh > /logs/verifier/test-stdout.txt 2>&1', timeoutSec,
      user: user === null || user === undefined ? 'root' : String(user),
    });
    const logs = turnLogsDir(req.sandbox.logsDir, req.turn);
    await provider.download(handle, '/logs/verifier', logs);
    const files = new Map<string, string>();
    const read = await provider.exec(handle, { command: 'cd /logs/verifier && for f in reward.json reward.txt; do [ -f "$f" ] && { printf "%s\\0" "$f"; cat "$f"; printf "\\0"; }; done; printf "test-stdout.txt\\0"; tail -c 4000 test-stdout.txt 2>/dev/null; printf "\\0"', user: 'root' });
    const parts = read.stdout.split('\0');
    for (let i = 0; i + 1 < parts.length; i += 2) files.set(parts[i]!, parts[i + 1] ?? "");
    const outcome = scoreVerifierOutput({
      timedOut: run.timedOut, rewardJson: files.get('reward.json'), rewardTxt: files.get('reward.txt'), testStdoutTail: files.get('test-stdout.txt'),
    });
    writeFileSync(join(logs, 'outcome.json'), JSON.stringify(outcome, null, 2));
    return {
      step: req.plan.steps[req.turn]!.name,
      reward: outcome.masked ? null : outcome.reward,
      verifier_rewards: outcome.verifier_rewards,
      ...(outcome.reward_components ? { reward_components: outcome.reward_components } : {}),
      failure_kind: outcome.failure_kind ?? null,
      failure_reason: outcome.failure_reason ?? null,
      masked: outcome.masked,
      response_text: req.responseText,
      timings: { ...req.agentTimings, verify: (Date.now() - started) / 1000 },
    };
  }));
}

export async function teardown(req: { sandbox: SandboxRef; episodeId: string }): Promise<void> {
  await sandboxProvider().teardown(req.sandbox.container);
  workerSlots().release(req.episodeId);
}
