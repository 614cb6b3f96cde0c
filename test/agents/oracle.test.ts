import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { harnessFor, SolutionEnvUnset } from '../../src/agents/index.ts';
import { solutionStatus } from '../../src/task/index.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { loadTestTask, makeCtx, seedTask, sh, teardownAll, writeTask } from './helpers.ts';

const made: string[] = [];
afterAll(() => teardownAll(made));

const oracle = harnessFor('oracle');

const AGENT_IMAGE = 'FROM berth-base:bookworm\nRUN useradd -m agent && mkdir -p /work && chown agent /work\nWORKDIR /work\n';
const TASK_TOML = `[agent]\ntimeout_sec = 60\nuser = "agent"\n[solution.env]\nGREETING = "\${BERTH_AGENTS_TEST_GREETING:-hello}"\nSECRET = "\${BERTH_AGENTS_TEST_UNSET}"\n`;

async function singleTask(solution: Record<string, string | Buffer>, toml = TASK_TOML): Promise<string> {
  return writeTask({
    'task.toml': toml,
    'instruction.md': 'Write out.txt.\n',
    'environment/Dockerfile': AGENT_IMAGE,
    'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
    ...Object.fromEntries(Object.entries(solution).map(([k, v]) => [`solution/${k}`, v])),
  });
}

describe('oracle with solve.sh', () => {
  it('runs solve.sh as the agent user in the working directory with [solution].env, detached, and writes a valid transcript', async () => {
    const path = await singleTask({
      'solve.sh': 'echo "$(whoami) $(pwd) $DEBIAN_FRONTEND $GREETING $SECRET" > out.txt\necho "solved with $SECRET"\n',
    });
    process.env['BERTH_AGENTS_TEST_UNSET'] = 'sekrit-3';
    const task = await loadTestTask(path);
    const handle = await seedTask(made, task);
    const ctx = await makeCtx(handle, task);
    const res = await oracle.runTurn(ctx);
    delete process.env['BERTH_AGENTS_TEST_UNSET'];

    expect(res.exitCode).toBe(0);
    expect(res.timedOut).toBe(false);
    expect(res.responseText).toBe('');
    expect(await sh(handle, 'cat /work/out.txt')).toBe('agent /work noninteractive hello sekrit-3\n');
    expect(await sh(handle, 'stat -c %U /work/out.txt')).toBe('agent\n');
    expect(await sh(handle, 'cat /logs/agent/oracle.txt')).toBe('solved with sekrit-3\n');
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
    expect(res.trajectory.steps[0]).toMatchObject({ source: 'user', message: 'Write out.txt.\n' });
    // The value read from the worker's environment stays out of the transcript and the host copy.
    expect(res.trajectory.steps[1]?.observation?.results[0]?.content).toBe('solved with [REDACTED]\n');
    expect(readFileSync(join(ctx.logsDir, 'oracle.txt'), 'utf8')).toBe('solved with [REDACTED]\n');
    expect(JSON.parse(readFileSync(join(ctx.logsDir, 'trajectory.json'), 'utf8'))).toEqual(res.trajectory);
  });

  it('refuses to run when [solution].env needs an unset variable, naming it', async () => {
    const task = await loadTestTask(await singleTask({ 'solve.sh': 'true\n' }));
    delete process.env['BERTH_AGENTS_TEST_UNSET'];
    const ctx = await makeCtx({ name: 'never-used', containerId: 'none', user: 'agent', workdir: '/work' }, task);
    const err = await oracle.runTurn(ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SolutionEnvUnset);
    expect((err as SolutionEnvUnset).variable).toBe('BERTH_AGENTS_TEST_UNSET');
    expect((err as Error).message).toMatch(/BERTH_AGENTS_TEST_UNSET.*not set/);
  });

  // Harbor 0.25 (agents/oracle.py, utils/scripts.py build_execution_command) chmods /solution/solve.sh as root and
  // executes it. The same two tiny tasks run under `harbor trial start -a oracle` on berth-base:bookworm: the
  // python3 `#!` script wrote "python" and the one without a `#!` line took its bash branch; both scored reward 1.
  it('executes solve.sh, so its #! line picks the interpreter, and runs one without a #! line under bash, as Harbor', async () => {
    const toml = '[agent]\ntimeout_sec = 60\nuser = "agent"\n';
    const python = await loadTestTask(await singleTask({ 'solve.sh': "#!/usr/bin/env python3\nimport os\nopen('ran', 'w').write('python ' + os.getcwd())\n" }, toml));
    const handle = await seedTask(made, python);
    const res = await oracle.runTurn(await makeCtx(handle, python));
    expect(res.exitCode).toBe(0);
    expect(await sh(handle, 'cat /work/ran')).toBe('python /work');
    expect(res.trajectory.steps[1]?.tool_calls?.[0]?.arguments).toEqual({ command: '/solution/solve.sh' });

    const plain = await loadTestTask(await singleTask({ 'solve.sh': 'if [[ -n "$BASH_VERSION" ]]; then printf bash > ran; else printf other > ran; fi\n' }, toml));
    const again = await oracle.runTurn(await makeCtx(handle, plain));
    expect(again.exitCode).toBe(0);
    expect(await sh(handle, 'cat /work/ran')).toBe('bash');
  });

  it('records a non-zero exit without failing, and a timeout', async () => {
    const toml = '[agent]\ntimeout_sec = 60\nuser = "agent"\n';
    const task = await loadTestTask(await singleTask({ 'solve.sh': 'echo boom >&2\nexit 3\n' }, toml));
    const handle = await seedTask(made, task);
    const ctx = await makeCtx(handle, task);
    const res = await oracle.runTurn(ctx);
    expect(res.exitCode).toBe(3);
    expect(res.timedOut).toBe(false);
    expect(readFileSync(join(ctx.logsDir, 'exit-code.txt'), 'utf8')).toBe('3\n');
    expect(readFileSync(join(ctx.logsDir, 'oracle.txt'), 'utf8')).toBe('boom\n');
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });

    const slow = await loadTestTask(await singleTask({ 'solve.sh': 'sleep 30\n' }, toml));
    const timed = await oracle.runTurn(await makeCtx(handle, slow, { timeoutSec: 1 }));
    expect(timed.timedOut).toBe(true);
    expect(timed.exitCode).not.toBe(0);
  });

  it('re-attaches to a running solve.sh for the same run key instead of running it twice', async () => {
    const toml = '[agent]\ntimeout_sec = 60\nuser = "agent"\n';
    const task = await loadTestTask(
      await singleTask({ 'solve.sh': 'echo run >> /work/counter\nsleep 2\ncat /solution/data.txt\n', 'data.txt': 'done\n' }, toml),
    );
    const handle = await seedTask(made, task);
    const ctx = await makeCtx(handle, task);
    // Two attempts at once (one presumed dead but still running), then a retry after the end.
    const first = oracle.runTurn(ctx);
    await new Promise((r) => setTimeout(r, 100));
    const [a, b] = await Promise.all([first, oracle.runTurn({ ...ctx })]);
    const again = await oracle.runTurn({ ...ctx });
    for (const res of [a, b, again]) {
      expect(res.exitCode).toBe(0);
      expect(res.trajectory.steps[1]?.observation?.results[0]?.content).toBe('done\n');
    }
    expect(await sh(handle, 'cat /work/counter')).toBe('run\n');
  });
});

describe('oracle with answer.md', () => {
  it('copies answer.md byte for byte into the working directory as the agent user and submits its text', async () => {
    const answer = Buffer.from('Réponse : 42 — ✓\nsecond line, no newline at the end', 'utf8');
    const task = await loadTestTask(await singleTask({ 'answer.md': answer }, '[agent]\ntimeout_sec = 60\nuser = "agent"\n'));
    const handle = await seedTask(made, task);
    const res = await oracle.runTurn(await makeCtx(handle, task));
    expect(res.responseText).toBe(answer.toString('utf8'));
    expect(res.exitCode).toBeNull();
    expect(await sh(handle, 'base64 -w0 /work/answer.md')).toBe(answer.toString('base64'));
    expect(await sh(handle, 'stat -c %U /work/answer.md')).toBe('agent\n');
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
    expect(res.trajectory.steps.at(-1)?.message).toBe(answer.toString('utf8'));
  });
});

describe('oracle on a multi-step task', () => {
  const MULTI = `[agent]\ntimeout_sec = 60\n[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n` +
    '[[steps]]\nname = "own"\n[[steps]]\nname = "fallback"\n[[steps]]\nname = "empty"\n';

  it('places each step\'s solution at /solution, falls back to the task\'s, and reports a step folder without solve.sh as missing', async () => {
    const path = await writeTask({
      'task.toml': MULTI,
      'tests/test.sh': 'echo 1 > /logs/verifier/reward.txt\n',
      'solution/solve.sh': 'echo task >> /app/trace\nls /solution\n',
      'steps/own/instruction.md': 'one',
      'steps/own/solution/solve.sh': 'echo own >> /app/trace\n',
      'steps/own/solution/only-in-own.txt': 'x',
      'steps/fallback/instruction.md': 'two',
      'steps/empty/instruction.md': 'three',
      'steps/empty/solution/README.md': 'no script here',
    });
    const task = await loadTestTask(path);
    expect(solutionStatus(task)).toEqual({ unvalidated: expect.stringContaining('steps/empty/solution/') });
    const handle = await seedTask(made, task);

    const r1 = await oracle.runTurn(await makeCtx(handle, task, { stepIndex: 0 }));
    expect(r1.exitCode).toBe(0);
    const r2 = await oracle.runTurn(await makeCtx(handle, task, { stepIndex: 1 }));
    expect(r2.exitCode).toBe(0);
    expect(await sh(handle, 'cat /logs/agent/oracle.txt')).toBe('solve.sh\n');
    const r3 = await oracle.runTurn(await makeCtx(handle, task, { stepIndex: 2 }));
    expect(r3).toMatchObject({ missingSolution: true, exitCode: null, responseText: '' });
    expect(validateAtif(r3.trajectory)).toEqual({ ok: true });
    expect(r3.trajectory.steps).toHaveLength(1);
    expect(await sh(handle, 'cat /app/trace')).toBe('own\ntask\n');
    expect(await sh(handle, 'ls -A /solution')).toBe('');
  });

  it('counts a task solvable when every step has a solution, its own or the task\'s', async () => {
    const path = await writeTask({
      'task.toml': MULTI.replace('[[steps]]\nname = "empty"\n', ''),
      'tests/test.sh': 'true\n',
      'solution/solve.sh': 'true\n',
      'steps/own/instruction.md': 'one',
      'steps/own/solution/solve.sh': 'true\n',
      'steps/fallback/instruction.md': 'two',
    });
    expect(solutionStatus(await loadTestTask(path))).toBe('solvable');
    const noSolution = await writeTask({ 'task.toml': '[environment]\ndocker_image = "berth-base:bookworm"\n', 'instruction.md': 'x', 'tests/test.sh': 'true\n' });
    expect(solutionStatus(await loadTestTask(noSolution))).toEqual({ unvalidated: 'the task has no solution/ folder' });
    expect(existsSync(noSolution)).toBe(true);
  });
});
