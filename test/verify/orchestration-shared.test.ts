// Shared-mode features end to end: users, [verifier].env templating and secret redaction, Python verifiers,
// collect hooks, artifacts, and multi-step turns (clearTurnFiles, step tests/ layering).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { clearTurnFiles } from '../../src/verify/clear-turn.ts';
import { runVerification, WARNINGS_FILE } from '../../src/verify/run-verification.ts';
import { BASE_IMAGE, context, Fixture, provider, sh, shTask } from './orchestration-helpers.ts';

const fx = new Fixture();
let root: SandboxHandle;
let asAgent: SandboxHandle;

beforeAll(async () => {
  [root, asAgent] = await Promise.all([
    fx.seed(),
    fx.seed({ user: 'agent', overlay: { timeoutSec: 60, runs: [{ command: 'useradd -m agent', env: {}, workdir: '/', user: 'root' }] } }),
  ]);
});
afterAll(() => fx.cleanup());

const WHO = 'id -un > /logs/verifier/who.txt; echo 1 > /logs/verifier/reward.txt';
const who = (logsDir: string) => readFileSync(join(logsDir, 'verifier', 'who.txt'), 'utf8').trim();

describe('verifier user (spec § Users)', () => {
  it('[agent].user set, no [verifier].user, bare docker_image (no record): root, not the agent user', async () => {
    const ctx = context(fx, await shTask(fx, WHO, { extra: '[agent]\nuser = "agent"' }), asAgent);
    expect((await runVerification(ctx)).reward).toBe(1);
    expect(who(ctx.logsDir)).toBe('root');
  });

  it('[verifier].user wins', async () => {
    const ctx = context(fx, await shTask(fx, WHO, { verifier: 'user = "nobody"', extra: '[agent]\nuser = "agent"' }), asAgent);
    expect((await runVerification(ctx)).reward).toBe(1);
    expect(who(ctx.logsDir)).toBe('nobody');
  });

  it('a numeric [verifier].user runs as that uid', async () => {
    const ctx = context(fx, await shTask(fx, 'id -u > /logs/verifier/who.txt; echo 1 > /logs/verifier/reward.txt', { verifier: 'user = 4321' }), root);
    expect((await runVerification(ctx)).reward).toBe(1);
    expect(who(ctx.logsDir)).toBe('4321');
  });

  it('[agent].user set and the image configuration on record: the image USER (given by the caller)', async () => {
    const ctx = context(fx, await shTask(fx, WHO, { extra: '[agent]\nuser = "agent"' }), asAgent);
    const task = { ...ctx.task, image: { ...ctx.task.image, mode: 'pull' as const } };
    expect((await runVerification({ ...ctx, task, agentImageUser: 'nobody' })).reward).toBe(1);
    expect(who(ctx.logsDir)).toBe('nobody');
  });

  it('[agent].user set and a pull-mode image: the image USER, read from the engine', async () => {
    const ctxDir = fx.tmp('berth-verify-img-');
    writeFileSync(join(ctxDir, 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN useradd -m agent\nUSER nobody\n`);
    await provider.images.build({ contextDir: ctxDir, tag: 'berth-verify-test-usernobody:1' });
    const task = await fx.task({
      'task.toml': '[agent]\nuser = "agent"\n[verifier]\ntimeout_sec = 20\n',
      'environment/Dockerfile': 'FROM berth-verify-test-usernobody:1\n',
      'tests/test.sh': WHO,
    });
    expect(task.image).toMatchObject({ mode: 'pull', user: null });
    const agent = await fx.seedTask(task);
    expect(agent.user).toBe('agent');
    const ctx = context(fx, task, agent);
    expect((await runVerification(ctx)).reward).toBe(1);
    expect(who(ctx.logsDir)).toBe('nobody');
  });

  it('no [agent].user: the sandbox default user (the image\'s)', async () => {
    const ctx = context(fx, await shTask(fx, WHO), root);
    await runVerification(ctx);
    expect(who(ctx.logsDir)).toBe('root');
  });
});

describe('[verifier].env templating and secrets', () => {
  const SECRET = 'sk-judge-0123456789';
  const HOST_TOKEN = 'host-token-abcdef';

  it('fills ${NAME} from [secrets] (over the host) and ${VAR} from the host; both redacted from failure_reason, warnings and test-stdout.txt', async () => {
    const task = await shTask(fx, 'echo "key=$JUDGE_KEY token=$TOKEN mode=$MODE fallback=$FB"; echo "{bad" > /logs/verifier/reward.json', {
      extra: [
        '[verifier.env]',
        'JUDGE_KEY = "${JUDGE_API_KEY}"',
        'TOKEN = "${HOST_TOKEN}"',
        'MODE = "strict"',
        'FB = "${UNSET_VAR:-fallback-value}"',
        '[[verifier.collect]]',
        `command = "echo ${SECRET}; exit 2"`,
      ].join('\n'),
    });
    const ctx = context(fx, task, root, {
      secrets: { JUDGE_API_KEY: SECRET },
      hostEnv: { JUDGE_API_KEY: 'host-loses', HOST_TOKEN },
    });
    const r = await runVerification(ctx);
    expect(r).toMatchObject({ failure_kind: 'harbor:invalid_reward', masked: false });
    expect(r.failure_reason).toContain('key=[REDACTED] token=[REDACTED] mode=strict fallback=fallback-value');
    expect(r.failure_reason).not.toContain(SECRET);
    expect(r.warnings.join('\n')).toContain('[REDACTED]');
    expect(r.warnings.join('\n')).not.toContain(SECRET);
    const stdout = readFileSync(join(ctx.logsDir, 'verifier', 'test-stdout.txt'), 'utf8');
    expect(stdout).toBe('key=[REDACTED] token=[REDACTED] mode=strict fallback=fallback-value\n');
    expect(JSON.stringify(r)).not.toContain(HOST_TOKEN);
  });

  it('a required variable set nowhere masks the row and names the fix', async () => {
    const task = await shTask(fx, 'echo 1 > /logs/verifier/reward.txt', { extra: '[verifier.env]\nKEY = "${NOT_SET_ANYWHERE}"' });
    const r = await runVerification(context(fx, task, root));
    expect(r).toMatchObject({ failure_kind: 'harbor:seed_failed', masked: true });
    expect(r.failure_reason).toMatch(/NOT_SET_ANYWHERE.*\[secrets\]/);
  });
});

describe('Python verifiers (nemo_gym.data.tasks.harbor.python_verifier)', () => {
  const VERIFY = [
    'from pathlib import Path',
    'from nemo_gym.verifiers import final_text',
    '',
    'def verify(workspace: Path, task_data: dict, response: dict) -> dict:',
    '    ok = final_text(response) == task_data["answer"]',
    '    return {"reward": float(ok), "in_workspace": float(Path.cwd() == workspace)}',
    '',
  ].join('\n');

  it('tests/verifier.py gets task_data and the response, as a non-root verifier user', async () => {
    const task = await fx.task({
      'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\n[verifier]\ntimeout_sec = 30\nuser = "nobody"\n`,
      'task_data.json': '{"answer": "42"}',
      'tests/verifier.py': VERIFY,
    });
    expect(task.verifier.kind).toBe('python');
    const right = await runVerification(context(fx, task, root, { responseText: '42' }));
    expect(right).toMatchObject({ reward: 1, verifier_rewards: { reward: 1, in_workspace: 1 }, masked: false });
    const wrong = await runVerification(context(fx, task, root, { responseText: '41' }));
    expect(wrong.reward).toBe(0);
    expect(wrong.failure_kind).toBeUndefined();
  });

  it('tests/test.sh beside verifier.py wins', async () => {
    const task = await fx.task({
      'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\n`,
      'tests/verifier.py': 'def verify():\n    return 1.0\n',
      'tests/test.sh': 'echo 0.5 > /logs/verifier/reward.txt\n',
    });
    expect((await runVerification(context(fx, task, root))).reward).toBe(0.5);
  });

  it('the dataset-root verifier.py grades a task without tests/', async () => {
    const task = await fx.task(
      { 'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\n`, 'task_data.json': '{"answer": "yes"}' },
      { datasetFiles: { 'verifier.py': VERIFY } },
    );
    expect(task.verifier).toMatchObject({ kind: 'python', python_in_task_tests: false, tests_dir: null });
    const r = await runVerification(context(fx, task, root, { responseText: 'yes' }));
    expect(r).toMatchObject({ reward: 1, masked: false });
  });

  it('a verify that raises: harbor:missing_reward with the error in test-stdout.txt', async () => {
    const task = await fx.task({
      'task.toml': `[environment]\ndocker_image = "${BASE_IMAGE}"\n`,
      'tests/verifier.py': 'def verify():\n    raise RuntimeError("boom from verify")\n',
    });
    const r = await runVerification(context(fx, task, root));
    expect(r).toMatchObject({ reward: 0, failure_kind: 'harbor:missing_reward', masked: false });
    expect(r.failure_reason).toContain('boom from verify');
  });
});

describe('[[verifier.collect]] hooks', () => {
  it('a failing hook and a hook past its timeout only warn; hooks run as the agent user before the clear', async () => {
    const task = await shTask(fx, 'test -f /logs/artifacts/collected.txt && echo 1 > /logs/verifier/reward.txt', {
      extra: [
        '[[verifier.collect]]',
        'command = "id -un > /logs/artifacts/collected.txt"',
        '[[verifier.collect]]',
        'command = "echo failing-hook; exit 7"',
        '[[verifier.collect]]',
        'command = "sleep 30"',
        'timeout_sec = 1',
      ].join('\n'),
    });
    const ctx = context(fx, task, asAgent);
    const r = await runVerification(ctx);
    expect(r).toMatchObject({ reward: 1, masked: false });
    expect(r.warnings).toHaveLength(2);
    expect(r.warnings[0]).toMatch(/#2.*exited 7.*failing-hook/);
    expect(r.warnings[1]).toMatch(/#3.*timed out after 1s/);
    expect(readFileSync(join(ctx.logsDir, 'artifacts', 'collected.txt'), 'utf8')).toBe('agent\n');
  });

  // Task Folder Format § [verifier], collect: "A hook that fails, times out or names a missing service only
  // logs a warning; one the sandbox cannot run masks the sample."
  it('a hook naming a missing service is skipped with a warning in the turn\'s verifier logs; grading goes on', async () => {
    const task = await shTask(fx, 'echo 1 > /logs/verifier/reward.txt', {
      extra: '[[verifier.collect]]\ncommand = "touch /logs/artifacts/from-api"\nservice = "api"\n[[verifier.collect]]\ncommand = "touch /logs/artifacts/from-main"',
    });
    const ctx = context(fx, task, root);
    const r = await runVerification(ctx);
    expect(r).toMatchObject({ reward: 1, masked: false });
    expect(r.failure_kind ?? null).toBeNull();
    expect(r.warnings).toEqual([expect.stringMatching(/^\[\[verifier\.collect\]\] #1 \(touch \/logs\/artifacts\/from-api\) names service "api", which this task does not have .*the hook was skipped and verification went on\.$/)]);
    expect(readFileSync(join(ctx.logsDir, 'verifier', WARNINGS_FILE), 'utf8')).toBe(`warning: ${r.warnings[0]}\n`);
    expect(existsSync(join(ctx.logsDir, 'artifacts', 'from-main'))).toBe(true);
    expect(existsSync(join(ctx.logsDir, 'artifacts', 'from-api'))).toBe(false);
  });
});

describe('[[steps.verifier.collect]] hooks (issue 37; Harbor 0.25 trial.py _collect_hooks_for)', () => {
  it('run after the task\'s hooks and before the step\'s artifacts; a failing one warns under its own name', async () => {
    const task = await fx.task({
      'task.toml': [
        `artifacts = ["/work/order.txt"]`,
        '[environment]', `docker_image = "${BASE_IMAGE}"`, 'workdir = "/work"',
        '[[verifier.collect]]', 'command = "echo task >> /work/order.txt"',
        '[[steps]]', 'name = "one"',
        '[[steps.verifier.collect]]', 'command = "echo step >> /work/order.txt"',
        '[[steps.verifier.collect]]', 'command = "exit 3"',
      ].join('\n'),
      'steps/one/instruction.md': 'one\n',
      'steps/one/tests/test.sh': '[ "$(cat /work/order.txt)" = "$(printf \'task\\nstep\')" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    await sh(root, 'mkdir -p /work && rm -f /work/order.txt');
    const ctx = context(fx, task, root, { stepIndex: 0 });
    const r = await runVerification(ctx);
    expect(r).toMatchObject({ reward: 1, masked: false });
    expect(readFileSync(join(ctx.logsDir, 'artifacts', 'work', 'order.txt'), 'utf8')).toBe('task\nstep\n');
    expect(r.warnings).toEqual([expect.stringMatching(/^\[\[steps\.verifier\.collect\]\] #2 of step one \(exit 3\) exited 3/)]);
  });
});

describe('artifacts in shared mode', () => {
  it('copies /logs/artifacts and the declared entries (destination, exclude); a missing one warns', async () => {
    await sh(root, 'mkdir -p /logs/artifacts/sub /work/data && echo a > /logs/artifacts/sub/a.txt && echo out > /work/out.txt && echo keep > /work/data/keep.txt && echo skip > /work/data/skip.log');
    const task = await shTask(fx, 'echo 1 > /logs/verifier/reward.txt', {
      top: 'artifacts = ["/work/out.txt", { source = "/work/data", destination = "data-copy", exclude = ["*.log"] }, "/nope/missing.txt"]',
    });
    const ctx = context(fx, task, root);
    const r = await runVerification(ctx);
    expect(r.reward).toBe(1);
    const art = join(ctx.logsDir, 'artifacts');
    expect(readFileSync(join(art, 'sub', 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(art, 'work', 'out.txt'), 'utf8')).toBe('out\n');
    expect(readFileSync(join(art, 'data-copy', 'keep.txt'), 'utf8')).toBe('keep\n');
    expect(existsSync(join(art, 'data-copy', 'skip.log'))).toBe(false);
    expect(r.artifacts).toEqual(['artifacts', 'artifacts/work/out.txt', 'artifacts/data-copy']);
    expect(r.warnings.join('\n')).toMatch(/\/nope\/missing\.txt does not exist/);
    expect(JSON.parse(readFileSync(join(art, 'manifest.json'), 'utf8'))).toEqual([
      { source: '/logs/artifacts', destination: '.', type: 'dir', status: 'ok', service: 'main' },
      { source: '/work/out.txt', destination: 'work/out.txt', type: 'file', status: 'ok', service: 'main' },
      { source: '/work/data', destination: 'data-copy', type: 'dir', status: 'ok', service: 'main' },
      { source: '/nope/missing.txt', destination: 'nope/missing.txt', type: null, status: 'failed', service: 'main' },
    ]);
  });
});

describe('artifacts in shared mode are collected before test.sh (issue 22)', () => {
  // Task Folder Format § [verifier], collect: hooks run "before test.sh and any artifact collection"; Harbor 0.25
  // collects artifacts after the agent and before verify (Harbor 0.25), with /logs/artifacts mounted.
  it('keeps what test.sh later removes, and what test.sh writes to /logs/artifacts (Harbor mounts it)', async () => {
    await sh(root, 'mkdir -p /work /logs/artifacts && echo before > /work/result.txt');
    const task = await shTask(fx, 'rm -f /work/result.txt; echo late > /logs/artifacts/late.txt; echo 1 > /logs/verifier/reward.txt', {
      top: 'artifacts = ["/work/result.txt"]',
    });
    const ctx = context(fx, task, root);
    const r = await runVerification(ctx);
    expect(r.reward).toBe(1);
    const art = join(ctx.logsDir, 'artifacts');
    expect(readFileSync(join(art, 'work', 'result.txt'), 'utf8')).toBe('before\n');
    expect(readFileSync(join(art, 'late.txt'), 'utf8')).toBe('late\n');
    expect(r.warnings).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(art, 'manifest.json'), 'utf8')) as Array<{ source: string; status: string }>;
    expect(manifest.map((m) => [m.source, m.status])).toEqual([['/logs/artifacts', 'ok'], ['/work/result.txt', 'ok']]);
  });
});

describe('multi-step turns', () => {
  it('grades a step with task tests/ under the step tests/, and clearTurnFiles resets between turns', async () => {
    const task = await fx.task({
      'task.toml': [
        'schema_version = "1.1"',
        '[environment]',
        `docker_image = "${BASE_IMAGE}"`,
        '[[steps]]',
        'name = "one"',
        '[[steps]]',
        'name = "two"',
        '[steps.verifier]',
        'timeout_sec = 15',
        '[steps.verifier.env]',
        'STEP = "two"',
      ].join('\n'),
      'tests/helpers.sh': 'score() { echo "$1" > /logs/verifier/reward.txt; }\n',
      'steps/one/instruction.md': 'one\n',
      'steps/one/tests/test.sh': 'source /tests/helpers.sh; score 0.5\n',
      'steps/two/instruction.md': 'two\n',
      'steps/two/tests/test.sh': 'source /tests/helpers.sh; score "$([ "$STEP" = two ] && [ ! -e /tests/left-over ] && echo 1 || echo 0)"\n',
    });
    const first = await runVerification(context(fx, task, root, { stepIndex: 0 }));
    expect(first.reward).toBe(0.5);
    await sh(root, 'touch /tests/left-over /logs/verifier/stale && test -f /logs/agent/trajectory.json');
    await clearTurnFiles(provider, root);
    expect(await sh(root, 'ls -A /tests /logs/verifier; test -e /logs/agent/trajectory.json && echo transcript || echo gone')).toBe('/logs/verifier:\n\n/tests:\ngone\n');
    const second = await runVerification(context(fx, task, root, { stepIndex: 1 }));
    expect(second.reward).toBe(1);
  });
});
