import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentConfigError, harnessFor } from '../../src/agents/index.ts';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import type { Task } from '../../src/task/index.ts';
import { validateAtif } from '../../src/trajectory/atif.ts';
import { loadTestTask, makeCtx, seedAsAgentUser, sh, teardownAll, writeTask } from './helpers.ts';

const made: string[] = [];
const command = harnessFor('command');
let handle: SandboxHandle;
let task: Task;

beforeAll(async () => {
  task = await loadTestTask(
    await writeTask({
      'task.toml': '[agent]\ntimeout_sec = 60\n[environment]\ndocker_image = "berth-base:bookworm"\n',
      'instruction.md': 'Say höla.\n',
      'tests/test.sh': 'true\n',
    }),
  );
  handle = await seedAsAgentUser(made);
});
afterAll(() => teardownAll(made));

describe('command agent', () => {
  it('runs the command as the agent user with the instruction in a file and an env var; stdout is the response', async () => {
    const cmd = 'echo "$(whoami) $(pwd) $MY_VAR"; cat "$BERTH_INSTRUCTION_FILE"; printf "%s" "$BERTH_INSTRUCTION" > env-copy.txt; echo oops >&2; exit 4';
    const ctx = await makeCtx(handle, task, { args: { cmd }, env: { MY_VAR: 'v1' }, user: 'agent', workdir: '/work' });
    const res = await command.runTurn(ctx);
    expect(res.exitCode).toBe(4);
    expect(res.responseText).toBe('agent /work v1\nSay höla.\n');
    expect(await sh(handle, 'cat /work/env-copy.txt')).toBe('Say höla.\n');
    expect(await sh(handle, 'cat /logs/agent/command.stderr.txt')).toBe('oops\n');
    expect(readFileSync(join(ctx.logsDir, 'command.txt'), 'utf8')).toBe(res.responseText);
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
  });

  it('takes the response from /logs/agent/response.txt when the command writes one', async () => {
    const cmd = 'echo noise; printf "final answer" > /logs/agent/response.txt';
    const res = await command.runTurn(await makeCtx(handle, task, { args: { cmd }, user: 'agent', workdir: '/work' }));
    expect(res).toMatchObject({ exitCode: 0, responseText: 'final answer' });
    // The next turn starts without the previous turn's response file.
    const next = await command.runTurn(await makeCtx(handle, task, { args: { cmd: 'echo second' }, user: 'agent', workdir: '/work' }));
    expect(next.responseText).toBe('second\n');
  });

  it('kills the command at the turn\'s budget and reports the timeout', async () => {
    const res = await command.runTurn(await makeCtx(handle, task, { args: { cmd: 'echo started; sleep 30' }, user: 'agent', workdir: '/work', timeoutSec: 1 }));
    expect(res.timedOut).toBe(true);
    expect(res.responseText).toBe('started\n');
  });

  it('a non-root command that empties /logs/agent ends its turn as usual: Berth\'s markers are not there (issue 37)', async () => {
    const cmd = 'rm -rf /logs/agent/* /logs/agent/.[!.]* 2>/dev/null; echo after; exit 3';
    const res = await command.runTurn(await makeCtx(handle, task, { args: { cmd }, user: 'agent', workdir: '/work' }));
    expect(res).toMatchObject({ exitCode: 3, timedOut: false });
    expect(res.trajectory.steps.at(-1)?.extra).not.toHaveProperty('ended_unrecorded');
  });

  it('a command that kills Berth\'s wrapper of its process ends the turn with no exit code, said in the transcript (issue 37)', async () => {
    const cmd = 'echo before; pkill -9 -f berth-detached; sleep 1; echo never';
    const res = await command.runTurn(await makeCtx(handle, task, { args: { cmd }, user: 'agent', workdir: '/work' }));
    expect(res.exitCode).toBeNull();
    expect(res.responseText).toContain('before');
    expect(res.trajectory.steps.at(-1)?.extra?.['ended_unrecorded']).toMatch(/ended without writing an exit code/);
    expect(validateAtif(res.trajectory)).toEqual({ ok: true });
  });

  it('asks for --agent-arg cmd when none is given', async () => {
    const err = await command.runTurn(await makeCtx(handle, task)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentConfigError);
    expect((err as Error).message).toContain('--agent-arg cmd=');
  });
});
