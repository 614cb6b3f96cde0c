// Every row of the outcome table (Task Folder Verifiers § Reward files, § How the verifier runs) end to end in a
// real sandbox: shared mode, one berth-base sandbox reused across cases (each verification clears what it needs).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { runVerification } from '../../src/verify/run-verification.ts';
import { context, derivedImage, Fixture, provider, sh, shTask } from './orchestration-helpers.ts';

const fx = new Fixture();
let agent: SandboxHandle;

beforeAll(async () => {
  agent = await fx.seed();
});
afterAll(() => fx.cleanup());

async function verifyBody(body: string, o: Parameters<typeof shTask>[2] = {}) {
  const task = await shTask(fx, body, o);
  return runVerification(context(fx, task, agent));
}

describe('reward files', () => {
  it('reward.txt: its number is the reward, whatever test.sh exits with', async () => {
    const r = await verifyBody('echo 0.75 > /logs/verifier/reward.txt; exit 3');
    expect(r).toMatchObject({ reward: 0.75, verifier_rewards: { reward: 0.75 }, masked: false, verifierMode: 'shared' });
    expect(r.failure_kind).toBeUndefined();
    expect(r.timings['test']).toBeGreaterThan(0);
  });

  it('reward.json with a reward key: the score, other keys kept as metrics', async () => {
    const r = await verifyBody(`echo '{"reward": 1, "accuracy": 0.5, "passed": true}' > /logs/verifier/reward.json`);
    expect(r).toMatchObject({ reward: 1, verifier_rewards: { reward: 1, accuracy: 0.5, passed: 1 }, masked: false });
    expect(r.reward_components).toBeUndefined();
  });

  it('reward.json without reward: the sum of its components, named in reward_components', async () => {
    const r = await verifyBody(`echo '{"a": 0.25, "b": true}' > /logs/verifier/reward.json`);
    expect(r).toMatchObject({ reward: 1.25, reward_components: { a: 0.25, b: 1 }, masked: false });
  });

  it('reward.json wins over reward.txt, even when it is malformed', async () => {
    const good = await verifyBody(`echo 0 > /logs/verifier/reward.txt; echo '{"reward": 0.5}' > /logs/verifier/reward.json`);
    expect(good.reward).toBe(0.5);
    const bad = await verifyBody(`echo 1 > /logs/verifier/reward.txt; echo '{oops' > /logs/verifier/reward.json`);
    expect(bad).toMatchObject({ reward: 0, failure_kind: 'harbor:invalid_reward', masked: false });
  });

  it('no reward file: 0, harbor:missing_reward, counted', async () => {
    const r = await verifyBody('echo "checked nothing"');
    expect(r).toMatchObject({ reward: 0, failure_kind: 'harbor:missing_reward', masked: false });
    expect(r.failure_reason).toContain('checked nothing');
  });

  it('tests/ without test.sh: harbor:missing_reward', async () => {
    const task = await fx.task({
      'task.toml': `[environment]\ndocker_image = "berth-base:bookworm"\n[verifier]\ntimeout_sec = 20\n`,
      'tests/helper.txt': 'not a test\n',
    });
    const r = await runVerification(context(fx, task, agent));
    expect(r).toMatchObject({ reward: 0, failure_kind: 'harbor:missing_reward', masked: false });
    expect(r.failure_reason).toMatch(/test\.sh/);
  });

  it('an empty reward file: harbor:invalid_reward', async () => {
    const r = await verifyBody(': > /logs/verifier/reward.txt');
    expect(r).toMatchObject({ reward: 0, failure_kind: 'harbor:invalid_reward', masked: false });
  });

  it('a malformed reward file or a non-finite value: harbor:invalid_reward', async () => {
    expect(await verifyBody('echo "{not json" > /logs/verifier/reward.json')).toMatchObject({ failure_kind: 'harbor:invalid_reward' });
    expect(await verifyBody('echo NaN > /logs/verifier/reward.txt')).toMatchObject({ failure_kind: 'harbor:invalid_reward' });
  });

  it('test.sh past its timeout without a reward: harbor:verifier_timeout, counted', async () => {
    const r = await verifyBody('echo started; sleep 60', { timeoutSec: 2 });
    expect(r).toMatchObject({ reward: 0, failure_kind: 'harbor:verifier_timeout', masked: false });
    expect(r.timings['test']).toBeLessThan(15);
  });

  it('a reward written before the timeout stands', async () => {
    const r = await verifyBody('echo 1 > /logs/verifier/reward.txt; sleep 60', { timeoutSec: 2 });
    expect(r).toMatchObject({ reward: 1, masked: false });
    expect(r.failure_kind).toBeUndefined();
  });

  it('a test.sh that exits 124 on its own is not a timeout', async () => {
    const r = await verifyBody('exit 124');
    expect(r.failure_kind).toBe('harbor:missing_reward');
  });
});

describe('what the agent leaves behind is ignored', () => {
  it('a planted /logs/verifier/reward.json and /tests helper never reach grading', async () => {
    await sh(agent, `mkdir -p /tests && echo 'echo 1 > /logs/verifier/reward.txt' > /tests/helper.sh && echo '{"reward": 1}' > /logs/verifier/reward.json && echo planted > /logs/verifier/report.txt`);
    const r = await verifyBody(
      'if [ -e /tests/helper.sh ] || [ -e /logs/verifier/report.txt ]; then echo 0 > /logs/verifier/reward.txt; else echo 0.5 > /logs/verifier/reward.txt; fi',
    );
    expect(r).toMatchObject({ reward: 0.5, verifier_rewards: { reward: 0.5 } });
  });

  it('a /logs/verifier replaced by a symlink is replaced by a real folder', async () => {
    await sh(agent, `mkdir -p /tmp/fake && echo '{"reward": 1}' > /tmp/fake/reward.json && rm -rf /logs/verifier && ln -s /tmp/fake /logs/verifier`);
    const r = await verifyBody('echo 0.25 > /logs/verifier/reward.txt');
    expect(r.reward).toBe(0.25);
    expect(await sh(agent, 'test -d /logs/verifier && ! test -L /logs/verifier && echo dir')).toBe('dir\n');
  });

  it('declared sidecar inputs survive the clear, as regular files only', async () => {
    await sh(agent, 'echo "{}" > /logs/verifier/actions.jsonl && ln -sf /etc/passwd /logs/verifier/other.jsonl');
    const task = await shTask(fx, 'if [ -f /logs/verifier/actions.jsonl ] && [ ! -e /logs/verifier/other.jsonl ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt');
    // dataset.toml's [gym.tasks."<id>".verifier] inputs, as the loader would hand them over.
    const withInputs = { ...task, verifier: { ...task.verifier, inputs: ['actions.jsonl', 'other.jsonl'] } };
    const r = await runVerification(context(fx, withInputs, agent));
    expect(r.reward).toBe(1);
  });

  it('writes the transcript to /logs/agent/trajectory.json and copies /logs/verifier out', async () => {
    const ctx = context(fx, await shTask(fx, 'python3 -c "import json;json.load(open(\'/logs/agent/trajectory.json\'))" && echo 1 > /logs/verifier/reward.txt'), agent);
    const r = await runVerification(ctx);
    expect(r.reward).toBe(1);
    expect(readFileSync(join(ctx.logsDir, 'verifier', 'reward.txt'), 'utf8')).toBe('1\n');
    expect(existsSync(join(ctx.logsDir, 'verifier', 'test-stdout.txt'))).toBe(true);
  });

  it('an invalid transcript is a bug: it throws', async () => {
    const ctx = context(fx, await shTask(fx, 'true'), agent, { trajectory: { schema_version: 'nope' } as never });
    await expect(runVerification(ctx)).rejects.toThrow(/not valid ATIF/);
  });
});

describe('test.sh that cannot start, and lost sandboxes (masked)', () => {
  it('an image without bash: verifier_error', async () => {
    const image = await derivedImage(fx, 'berth-verify-test-nobash:1', 'rm -f /usr/bin/bash /bin/bash');
    const handle = await fx.seed({ image });
    const r = await runVerification(context(fx, await shTask(fx, 'echo 1 > /logs/verifier/reward.txt'), handle));
    expect(r).toMatchObject({ reward: 0, failure_kind: 'verifier_error', masked: true });
    expect(r.failure_reason).toMatch(/no bash/);
  });

  it('an image without timeout: verifier_error; without tar: provider_unavailable', async () => {
    const noTimeout = await fx.seed({ image: await derivedImage(fx, 'berth-verify-test-notimeout:1', 'rm -f /usr/bin/timeout') });
    const noTar = await fx.seed({ image: await derivedImage(fx, 'berth-verify-test-notar:1', 'rm -f /usr/bin/tar /bin/tar') });
    const task = await shTask(fx, 'echo 1 > /logs/verifier/reward.txt');
    expect(await runVerification(context(fx, task, noTimeout))).toMatchObject({ failure_kind: 'verifier_error', masked: true });
    const r = await runVerification(context(fx, task, noTar));
    expect(r).toMatchObject({ failure_kind: 'provider_unavailable', masked: true });
    expect(r.failure_reason).toMatch(/tar/);
  });

  it('a [verifier].user that does not exist: verifier_error', async () => {
    const r = await verifyBody('echo 1 > /logs/verifier/reward.txt', { verifier: 'user = "no-such-user"' });
    expect(r).toMatchObject({ failure_kind: 'verifier_error', masked: true });
    expect(r.failure_reason).toMatch(/no-such-user/);
  });

  it('a sandbox that is gone: provider_unavailable', async () => {
    const doomed = await fx.seed();
    await provider.teardown(doomed);
    const r = await runVerification(context(fx, await shTask(fx, 'echo 1 > /logs/verifier/reward.txt'), doomed));
    expect(r).toMatchObject({ reward: 0, failure_kind: 'provider_unavailable', masked: true });
  });

  it('a sandbox lost while test.sh runs: provider_unavailable, not a reward of 0', async () => {
    const doomed = await fx.seed();
    const task = await shTask(fx, 'sleep 20; echo 1 > /logs/verifier/reward.txt', { timeoutSec: 30 });
    const running = runVerification(context(fx, task, doomed));
    await new Promise((r) => setTimeout(r, 2500));
    await provider.teardown(doomed);
    expect(await running).toMatchObject({ reward: 0, failure_kind: 'provider_unavailable', masked: true });
  });
});

describe('activity plumbing', () => {
  it('heartbeats after each phase and reports timings per phase (a root verifier clears and runs test.sh in one exec)', async () => {
    let beats = 0;
    const task = await shTask(fx, 'echo 1 > /logs/verifier/reward.txt');
    const r = await runVerification(context(fx, task, agent, { heartbeat: () => beats++ }));
    expect(beats).toBeGreaterThanOrEqual(3);
    expect(Object.keys(r.timings).sort()).toEqual(['artifacts', 'score', 'test']);
    expect(r.reward).toBe(1);
  });

  it('a verifier user other than root clears as root first, then runs test.sh as itself', async () => {
    let beats = 0;
    const task = await shTask(fx, 'id -un > /logs/verifier/who.txt; echo 1 > /logs/verifier/reward.txt', { verifier: 'user = "nobody"' });
    const ctx = context(fx, task, agent, { heartbeat: () => beats++ });
    const r = await runVerification(ctx);
    expect(beats).toBeGreaterThanOrEqual(4);
    expect(Object.keys(r.timings).sort()).toEqual(['artifacts', 'prepare', 'score', 'test']);
    expect(r.reward).toBe(1);
    expect(readFileSync(join(ctx.logsDir, 'verifier', 'who.txt'), 'utf8')).toBe('nobody\n');
  });

  it('a cancelled activity stops between phases (and is not turned into a row)', async () => {
    const task = await shTask(fx, 'echo 1 > /logs/verifier/reward.txt');
    await expect(runVerification(context(fx, task, agent, { signal: AbortSignal.abort() }))).rejects.toThrow(/abort/i);
  });
});
