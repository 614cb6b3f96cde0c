// An agent's time limit kept from outside in training mode (src/agents/moving-deadline.ts): on a real Docker sandbox,
// a detached agent process ends when its own budget is spent, the time the gateway held its calls not counted; a
// re-attached turn counts from the process's start, as its marker says.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import type { AgentTurnContext } from '../../src/agents/types.ts';
import type { Task } from '../../src/task/index.ts';
import { detachedKey, runDetached } from '../../src/agents/detached-run.ts';
import { makeSpec, provider, sh, teardownAll } from '../sandbox/helpers.ts';

const made: string[] = [];
let handle: SandboxHandle;

beforeAll(async () => {
  handle = (await provider.seed(makeSpec(made, { user: 'nobody', workdir: '/tmp/agent' }))).handle;
});
afterAll(() => teardownAll(made));

function ctxOf(timeoutSec: number, heldMs: () => number, runKey = randomBytes(4).toString('hex')): AgentTurnContext {
  return {
    provider, handle, task: {} as Task, stepIndex: 0, instruction: '', user: 'nobody', workdir: '/tmp/agent', env: {}, timeoutSec, runKey,
    logsDir: mkdtempSync(join(tmpdir(), 'berth-deadline-')), args: {}, heartbeat: () => undefined, heldMs,
  };
}

const run = async (ctx: AgentTurnContext, command: string) => {
  const started = Date.now();
  const res = await runDetached(ctx, { prefix: 'agent', command, env: {}, outputPath: `/tmp/agent/out-${ctx.runKey}.txt` });
  return { res, seconds: (Date.now() - started) / 1000 };
};

describe('a detached agent\'s moving time limit', () => {
  it('ends the process when its own budget is spent, as timed out, its processes gone', async () => {
    const { res, seconds } = await run(ctxOf(2, () => 0), 'sleep 301');
    expect(res).toMatchObject({ timedOut: true, reattached: false });
    expect(res.lost).toBeUndefined();
    // The timeout inside the sandbox is the hour-later backstop: the limit came from outside, within a look or two.
    expect(seconds).toBeGreaterThanOrEqual(2);
    expect(seconds).toBeLessThan(15);
    expect(await sh(handle, 'ps -eo args')).not.toContain('sleep 301');
  }, 60_000);

  it('moves the limit on by the time the gateway held the turn\'s calls', async () => {
    const { res, seconds } = await run(ctxOf(2, () => 6000), 'sleep 302');
    expect(res).toMatchObject({ timedOut: true });
    expect(seconds).toBeGreaterThanOrEqual(8);
    expect(seconds).toBeLessThan(20);
  }, 60_000);

  it('leaves a process that ends within its budget alone', async () => {
    const { res } = await run(ctxOf(30, () => 0), 'sleep 1; exit 3');
    expect(res).toMatchObject({ exitCode: 3, timedOut: false });
  }, 60_000);

  it('counts a re-attached turn from the process\'s start, not from the re-attach', async () => {
    const runKey = randomBytes(4).toString('hex');
    // An earlier attempt started the process (its worker then died); 4 s later another attempt re-attaches.
    await provider.launchDetached(handle, { key: detachedKey('agent', runKey), command: 'sleep 303', user: 'nobody', workdir: '/tmp/agent', timeoutSec: 3600 });
    await new Promise((r) => setTimeout(r, 4000));
    const { res, seconds } = await run(ctxOf(6, () => 0, runKey), 'sleep 303');
    expect(res).toMatchObject({ timedOut: true, reattached: true });
    expect(seconds).toBeLessThan(6);
  }, 60_000);
});
