// Separate verification end to end: artifacts out of the agent's sandbox, a fresh verifier sandbox from the
// resolved image with [verifier.environment]'s env and workdir, artifacts restored, tests/ and transcript
// uploaded, test.sh run, the verifier sandbox removed. Plus the offline separate-verifier corpus tasks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { containerName } from '../../src/sandbox/names.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { loadTask, type Task } from '../../src/task/index.ts';
import { runVerification } from '../../src/verify/run-verification.ts';
import { BASE_IMAGE, context, Fixture, provider, sh } from './orchestration-helpers.ts';
import { CORPUS } from '../helpers/corpus.ts';

const fx = new Fixture();
afterAll(() => fx.cleanup());


const ALIASES = { 'ubuntu:24.04': BASE_IMAGE };

async function expectGone(name: string): Promise<void> {
  await expect(provider.attach(name)).rejects.toThrow(/lost|no such container/i);
}

describe('separate mode', () => {
  it('grades only what artifacts carry over, in a fresh sandbox with [verifier.environment] env, workdir and no network', async () => {
    const checks = [
      'r=0',
      '[ "$(cat /work/out.txt)" = out ] && r=$((r+1))',
      '[ "$(cat /data/keep.txt)" = keep ] && r=$((r+1))',
      '[ ! -e /data/skip.log ] && r=$((r+1))',
      '[ ! -e /tmp/agent-only.txt ] && r=$((r+1))',
      '[ "$(cat /logs/artifacts/note.txt)" = note ] && r=$((r+1))',
      '[ "$(pwd)" = /grading ] && r=$((r+1))',
      '[ "$SANDBOX_VAR" = from-env-table ] && [ "$JUDGE" = "$EXPECT_JUDGE" ] && [ "$OMP_NUM_THREADS" = 4 ] && [ "$MKL_NUM_THREADS" = 2 ] && r=$((r+1))',
      '[ "$(ls /sys/class/net)" = lo ] && r=$((r+1))',
      'python3 -c "import json;json.load(open(\'/logs/agent/trajectory.json\'))" && r=$((r+1))',
      'echo "checks passed: $r"',
      'echo "{\\"reward\\": $([ $r = 9 ] && echo 1 || echo 0), \\"checks\\": $r}" > /logs/verifier/reward.json',
    ].join('\n');
    const task = await fx.task({
      'task.toml': [
        'artifacts = ["/work/out.txt", { source = "/data", exclude = ["*.log"] }]',
        '[environment]',
        `docker_image = "${BASE_IMAGE}"`,
        '[verifier]',
        'timeout_sec = 30',
        'environment_mode = "separate"',
        'network_mode = "no-network"',
        '[verifier.env]',
        'JUDGE = "${JUDGE_KEY}"',
        'EXPECT_JUDGE = "judge-secret-42"',
        '[verifier.environment]',
        `docker_image = "${BASE_IMAGE}"`,
        'workdir = "/grading"',
        'cpus = 2',
        '[verifier.environment.env]',
        'SANDBOX_VAR = "from-env-table"',
        'OMP_NUM_THREADS = "4"',
      ].join('\n'),
      'tests/test.sh': checks,
    });
    expect(task.verifier.mode).toBe('separate');
    const agent = await fx.seed();
    await sh(agent, 'mkdir -p /work /data && echo out > /work/out.txt && echo keep > /data/keep.txt && echo skip > /data/skip.log && echo secret > /tmp/agent-only.txt && echo note > /logs/artifacts/note.txt');
    const ctx = context(fx, task, agent, { secrets: { JUDGE_KEY: 'judge-secret-42' } });
    const r = await runVerification(ctx);
    expect(r.failure_reason).toBeUndefined();
    expect(readFileSync(join(ctx.logsDir, 'verifier', 'test-stdout.txt'), 'utf8')).toBe('checks passed: 9\n');
    expect(r).toMatchObject({ reward: 1, verifier_rewards: { reward: 1, checks: 9 }, masked: false, verifierMode: 'separate' });
    expect(r.artifacts).toEqual(['artifacts', 'artifacts/work/out.txt', 'artifacts/data']);
    expect(r.timings['seed']).toBeGreaterThan(0);
    await expectGone(containerName(ctx.naming.workflowId, ctx.naming.runId, 'verifier'));
    // The agent's sandbox is stopped while the verifier grades; the episode's teardown removes it.
    expect(await provider.inspect(agent)).toMatchObject({ running: false });
    // A retried verification starts it again for the collect hooks and still scores.
    expect(await runVerification(ctx)).toMatchObject({ reward: 1, masked: false });
  });

  it('a verifier image that cannot be built masks the row, and no sandbox is left behind', async () => {
    const task = await fx.task({
      'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\n[verifier]\nenvironment_mode = "separate"\n[verifier.environment]\ncpus = 1\n`,
      'tests/Dockerfile': `FROM ${BASE_IMAGE}\nRUN echo verifier-build-broken && exit 3\n`,
      'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
    });
    expect(task.verifier.image).toMatchObject({ kind: 'build' });
    const agent = await fx.seed();
    const ctx = context(fx, task, agent);
    const r = await runVerification(ctx);
    expect(r).toMatchObject({ reward: 0, failure_kind: 'harbor:seed_failed', masked: true });
    expect(r.failure_reason).toMatch(/-verifier failed/);
    await expectGone(containerName(ctx.naming.workflowId, ctx.naming.runId, 'verifier'));
  });
});

describe('a Python verifier in separate mode', () => {
  it('gets the shim, task_data and response in the verifier sandbox, and the workspace from artifacts', async () => {
    const task = await fx.task({
      'task.toml': [
        'artifacts = ["/app"]',
        '[environment]',
        `docker_image = "${BASE_IMAGE}"`,
        'workdir = "/app"',
        '[verifier]',
        'environment_mode = "separate"',
      ].join('\n'),
      'task_data.json': '{"answer": "blue"}',
      'tests/verifier.py': [
        'from nemo_gym.verifiers import final_text',
        'from nemo_gym.verifiers.files import read_text',
        '',
        'def verify(workspace, task_data, response):',
        '    ok = read_text(workspace, "answer.txt") == task_data["answer"] == final_text(response)',
        '    return float(ok)',
        '',
      ].join('\n'),
    });
    expect(task.verifier).toMatchObject({ kind: 'python', mode: 'separate' });
    const agent = await fx.seedTask(task);
    await sh(agent, 'echo blue > /app/answer.txt && echo leak > /tmp/agent-only.txt');
    const r = await runVerification(context(fx, task, agent, { responseText: 'blue' }));
    expect(r).toMatchObject({ reward: 1, masked: false, verifierMode: 'separate' });
  });
});

describe('a Python verifier\'s workspace in separate mode (nemo_gym.data.tasks.harbor.python_verifier; Task Folder Verifiers § Python verifiers)', () => {
  it('is the task\'s working directory, where the artifacts restore it, not the verifier sandbox\'s own working directory', async () => {
    const task = await fx.task({
      'task.toml': [
        'artifacts = ["/app"]',
        '[environment]',
        `docker_image = "${BASE_IMAGE}"`,
        'workdir = "/app"',
        '[verifier.environment]',
        `docker_image = "${BASE_IMAGE}"`,
        'workdir = "/grader"',
      ].join('\n'),
      'tests/verifier.py': [
        'import os',
        'from nemo_gym.verifiers.files import read_text',
        '',
        'def verify(workspace, state):',
        '    return {"reward": float(read_text(workspace, "answer.txt") == "blue"), "at_app": float(str(workspace) == "/app"),',
        '            "state_same": float(state["workspace"] == workspace), "cwd_grader": float(os.getcwd() == "/grader")}',
        '',
      ].join('\n'),
    });
    expect(task.verifier).toMatchObject({ kind: 'python', mode: 'separate' });
    const agent = await fx.seedTask(task);
    await sh(agent, 'echo blue > /app/answer.txt');
    const r = await runVerification(context(fx, task, agent));
    // test.sh itself still runs from the verifier environment's working directory, as every separate test.sh does.
    expect(r).toMatchObject({ reward: 1, masked: false, verifierMode: 'separate', verifier_rewards: { reward: 1, at_app: 1, state_same: 1, cwd_grader: 1 } });
  });
});

describe('a separate step\'s [[steps.verifier.collect]] hooks (issue 37; Harbor 0.25 trial.py _collect_hooks_for)', () => {
  it('run in the agent\'s sandbox after the task\'s hooks, before the step\'s artifacts are copied to its verifier', async () => {
    const task = await fx.task({
      'task.toml': [
        '[environment]', `docker_image = "${BASE_IMAGE}"`, 'workdir = "/app"',
        '[[verifier.collect]]', 'command = "echo task >> /app/order.txt"',
        '[[steps]]', 'name = "one"', 'artifacts = ["/app/order.txt"]',
        '[steps.verifier]', 'environment_mode = "separate"',
        '[[steps.verifier.collect]]', 'command = "echo step >> /app/order.txt"',
      ].join('\n'),
      'steps/one/instruction.md': 'one\n',
      'steps/one/tests/test.sh': '[ "$(cat /app/order.txt)" = "$(printf \'task\\nstep\')" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    expect(task.steps[0]!.verifier.mode).toBe('separate');
    const agent = await fx.seedTask(task);
    const r = await runVerification(context(fx, task, agent, { stepIndex: 0, agentNeededAfter: true }));
    expect(r).toMatchObject({ reward: 1, masked: false, verifierMode: 'separate' });
  });
});

describe('separate verifier image on record', () => {
  it('a built tests/Dockerfile runs its ENTRYPOINT and HEALTHCHECK before test.sh; the entrypoint output is kept', async () => {
    const task = await fx.task({
      'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\n[verifier]\ntimeout_sec = 30\n[verifier.environment]\nenv = { GREETING = "hello-entry" }\n`,
      'tests/Dockerfile': [
        `FROM ${BASE_IMAGE}`,
        `RUN printf '#!/bin/sh\\necho "entry started $GREETING"\\n(sleep 3; touch /tmp/healthy) &\\nexec "$@"\\n' > /entry.sh && chmod 755 /entry.sh`,
        'COPY test.sh /tests/test.sh',
        'HEALTHCHECK --interval=1s --timeout=2s --retries=10 CMD test -f /tmp/healthy',
        'ENTRYPOINT ["/entry.sh"]',
        '',
      ].join('\n'),
      'tests/test.sh': 'if [ -f /tmp/healthy ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
    });
    expect(task.verifier.image).toMatchObject({ kind: 'build' });
    const agent = await fx.seed();
    const ctx = context(fx, task, agent);
    const r = await runVerification(ctx);
    expect(r).toMatchObject({ reward: 1, masked: false, verifierMode: 'separate' });
    expect(readFileSync(join(ctx.logsDir, 'verifier', 'verifier-entrypoint-stdout.txt'), 'utf8')).toContain('entry started hello-entry');
  });
});

/** The oracle, minimally: upload solution/ to /solution and run solve.sh as the agent. */
async function solve(task: Task, agent: SandboxHandle): Promise<void> {
  await provider.upload(agent, task.solution.dir!, '/solution');
  const res = await provider.exec(agent, { command: 'bash /solution/solve.sh', timeoutSec: 60 });
  if (res.exitCode !== 0) throw new Error(`solve.sh failed (${res.exitCode}): ${res.stdout}${res.stderr}`);
}

describe('offline separate-verifier corpus tasks', () => {
  for (const rel of [
    'harbor-examples/separate-verifier-environment',
    'harbor-verifier-mode-matrix/separate-implicit',
    'harbor-verifier-mode-matrix/separate-reuse-env',
  ]) {
    it(`${rel}: the reference solution scores 1 in the separate verifier`, async () => {
      const task = await loadTask(join(CORPUS, rel), { imageAliases: ALIASES, logger: { warn: () => {} } });
      expect(task.verifier.mode).toBe('separate');
      const agent = await fx.seedTask(task);
      await solve(task, agent);
      const ctx = context(fx, task, agent, { imageAliases: ALIASES });
      const r = await runVerification(ctx);
      const stdout = readFileSync(join(ctx.logsDir, 'verifier', 'test-stdout.txt'), 'utf8');
      expect(r, stdout).toMatchObject({ reward: 1, masked: false, verifierMode: 'separate' });
      expect(r.failure_kind).toBeUndefined();
      await expectGone(containerName(ctx.naming.workflowId, ctx.naming.runId, 'verifier'));
    });
  }

  it('harbor-examples/separate-verifier-environment without the solution scores 0 (the verifier really checks)', async () => {
    const task = await loadTask(join(CORPUS, 'harbor-examples/separate-verifier-environment'), { imageAliases: ALIASES, logger: { warn: () => {} } });
    const agent = await fx.seedTask(task);
    await sh(agent, 'echo "this should stay in the agent environment" > /tmp/agent-only.txt');
    const r = await runVerification(context(fx, task, agent, { imageAliases: ALIASES }));
    expect(r).toMatchObject({ reward: 0, masked: false });
    expect(r.warnings.join('\n')).toMatch(/configured-artifact\.txt does not exist/);
  });
});
