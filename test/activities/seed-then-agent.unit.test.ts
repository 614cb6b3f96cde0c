// The seed and the first agent in one activity (docs/performance-notes.md, One activity for the seed and the agent): a finished seed is recorded so a retried attempt
// goes straight to the agent, and a failure of the agent part names the sandbox while a seed failure names none.
import { ApplicationFailure } from '@temporalio/activity';
import { ActivityFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordedSeed, recordSeed } from '../../src/host/seed-record.ts';
import { withSeededSandbox } from '../../src/activities/seed-then-agent.ts';
import { seededSandboxOf } from '../../src/workflows/failures.ts';
import { seedsWithAgent } from '../../src/workflows/seed-with-agent.ts';
import type { AgentName, EpisodePlan, HostLease, SandboxRef } from '../../src/workflows/types.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const logsDir = () => { const d = mkdtempSync(join(tmpdir(), 'berth-seed-record-')); dirs.push(d); return d; };
const sandbox: SandboxRef = { queue: 'berth-host-x', name: 'berth-abc-agent', id: 'c0ffee', host: 'x', user: 'root', workdir: '/app', logsDir: '/l' };
/** As the workflow sees an activity's failure. */
const failed = (cause: Error) => new ActivityFailure('activity failed', 'seedThenAgentTurn', '1', RetryState.NON_RETRYABLE_FAILURE, 'w', cause);

describe('the seed record', () => {
  it('is absent until a seed finished, then gives back the sandbox', () => {
    const dir = logsDir();
    expect(recordedSeed(dir)).toBeUndefined();
    recordSeed(dir, sandbox);
    expect(recordedSeed(dir)).toEqual(sandbox);
  });

  it('makes the run\'s logs folder when it is not there yet', () => {
    const dir = join(logsDir(), 'episodes', 'run');
    recordSeed(dir, sandbox);
    expect(recordedSeed(dir)).toEqual(sandbox);
  });

  it('a torn record counts as none (the seed runs again and adopts)', () => {
    const dir = logsDir();
    writeFileSync(join(dir, 'seeded-sandbox.json'), '{"queue": "berth-ho');
    expect(recordedSeed(dir)).toBeUndefined();
  });
});

describe('which failure of seedThenAgentTurn names its sandbox', () => {
  const cases: Array<{ name: string; err: unknown; sandbox: SandboxRef | undefined }> = [
    { name: 'the agent part failed for good', err: withSeededSandbox(ApplicationFailure.nonRetryable('sandbox lost', 'provider_unavailable'), sandbox), sandbox },
    { name: 'the agent part failed with details of its own', err: withSeededSandbox(ApplicationFailure.create({ type: 'agent:unknown_model', message: 'm', nonRetryable: true, details: ['out'] }), sandbox), sandbox },
    { name: 'the seed failed (its own kind, no sandbox)', err: ApplicationFailure.nonRetryable('overlay line 2 failed', 'harbor:overlay_failed'), sandbox: undefined },
    { name: 'the seed failed with its output as a detail', err: ApplicationFailure.create({ type: 'harbor:seed_failed', message: 'hc', nonRetryable: true, details: ['hc output'] }), sandbox: undefined },
    { name: 'the host never answered', err: new TimeoutFailure('heartbeat', undefined, TimeoutType.HEARTBEAT), sandbox: undefined },
  ];
  it.each(cases)('$name', ({ err, sandbox: expected }) => {
    expect(seededSandboxOf(failed(err as Error))).toEqual(expected);
  });

  it('keeps the failure\'s kind, message, retryability and details', () => {
    const before = ApplicationFailure.create({ type: 'provider_unavailable', message: 'gone', nonRetryable: false, details: ['a'] });
    const after = withSeededSandbox(before, sandbox) as ApplicationFailure;
    expect(after).toBeInstanceOf(ApplicationFailure);
    expect({ type: after.type, message: after.message, nonRetryable: after.nonRetryable, details: after.details })
      .toEqual({ type: 'provider_unavailable', message: 'gone', nonRetryable: false, details: ['a', { seededSandbox: sandbox }] });
  });

  it('leaves an error Temporal retries as it is (a plain error, a cancellation)', () => {
    const plain = new Error('engine hiccup');
    expect(withSeededSandbox(plain, sandbox)).toBe(plain);
  });

  it('is not read from an error that is not an activity\'s failure', () => {
    expect(seededSandboxOf(new Error('bug'))).toBeUndefined();
  });
});

describe('which episodes seed and run their agent in one activity', () => {
  const step = { name: 'main', agentTimeoutSec: 60, verifierTimeoutSec: 60 };
  const own: HostLease = { host: 'h', queue: 'berth-host-h' };
  const shared: HostLease = { ...own, filesQueue: 'berth-files-1' };
  const cases: Array<{ name: string; agent: AgentName; steps: EpisodePlan['steps']; lease: HostLease; patched?: boolean; together: boolean; asked: boolean }> = [
    { name: 'single-step, oracle', agent: 'oracle', steps: [step], lease: own, together: true, asked: false },
    { name: 'single-step, an installed agent', agent: 'claude-code', steps: [step], lease: own, together: true, asked: false },
    { name: 'multi-step', agent: 'oracle', steps: [step, { ...step, name: 'two' }], lease: own, together: false, asked: false },
    { name: 'a first step with its own setup', agent: 'oracle', steps: [{ ...step, setupSec: 30 }], lease: own, together: false, asked: false },
    { name: 'the openai agent (a child workflow per turn)', agent: 'openai', steps: [step], lease: own, together: false, asked: false },
    { name: 'a sandbox queue shared by several machines, before patch cluster-seed-with-agent', agent: 'oracle', steps: [step], lease: shared, patched: false, together: false, asked: true },
    { name: 'a sandbox queue shared by several machines, with the patch', agent: 'oracle', steps: [step], lease: shared, patched: true, together: true, asked: true },
    { name: 'a shared queue, multi-step (the patch not asked)', agent: 'oracle', steps: [step, { ...step, name: 'two' }], lease: shared, patched: true, together: false, asked: false },
    { name: 'a shared queue, the openai agent (the patch not asked)', agent: 'openai', steps: [step], lease: shared, patched: true, together: false, asked: false },
  ];
  it.each(cases)('$name', ({ agent, steps, lease, patched, together, asked }) => {
    let askedPatch = false;
    expect(seedsWithAgent({ agent }, { steps }, lease, () => { askedPatch = true; return patched ?? false; })).toBe(together);
    // The patch is asked only of the episodes it changes: no marker in any other episode's history.
    expect(askedPatch).toBe(asked);
  });
});
