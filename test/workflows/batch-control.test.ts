import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Context } from '@temporalio/activity';
import { randomBytes } from 'node:crypto';
import { BatchHandle } from '../../src/client/batch.ts';
import { ResultsFolder } from '../../src/client/results.ts';
import { startScriptedWorker } from '../helpers/temporal.ts';
import type { HostActivities } from '../../src/activities/host-activities.ts';
import type { SharedActivities } from '../../src/activities/shared-activities.ts';
import type { BatchCarry } from '../../src/workflows/batch.ts';
import { DEFAULT_EPISODE_SETTINGS } from '../../src/activities/types.ts';
import type { BatchInput, EpisodePlan } from '../../src/workflows/types.ts';
import { recordHistory, runChain } from '../helpers/histories.ts';
import { waitUntil } from '../helpers/worker-process.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// BatchWorkflow's live control across continue-as-new, on a real server with scripted episodes: an episode's agent
// turn runs until the test releases its task, so what runs when is the test's choice.
const queue = `test-steer-${randomBytes(3).toString('hex')}`;
const released = new Set<string>();
let client: Client;

// Each scripted activity has the type of the activity it stands for (the object below `satisfies` them all).
type Activities = SharedActivities & HostActivities;

const scriptedSeed: Activities['seed'] = async () => ({ queue, name: 'c', id: 'c', host: 'test-host', user: 'root', workdir: '/', logsDir: '/tmp/x' });

const scriptedAgent: Activities['agentTurn'] = async (req) => {
  while (!released.has(req.input.taskId)) { Context.current().heartbeat(); await Context.current().sleep(100); }
  return { responseText: 'done', exitCode: 0, timings: { agent: 1 } };
};

function planned(taskId: string): { plan: EpisodePlan; lease: { host: string; queue: string } } {
  return {
    plan: { taskId, digest: 'sha256:x', image: 'img', multiStep: false, strategy: 'mean', verifierMode: 'shared',
      steps: [{ name: taskId, agentTimeoutSec: 120, verifierTimeoutSec: 30 }], episodeBudgetSec: 600, seedTimeoutSec: 30,
      heartbeatTimeoutSec: 10, scheduleToStartSec: 60 },
    lease: { host: 'test-host', queue },
  };
}

const activities = {
  // The episode's local activity (patch episode-v8), and the activity that waits for a slot.
  async planAndTryHost(req) { return planned(req.input.taskId); },
  async planAndPickHost(req) { return planned(req.input.taskId); },
  seed: scriptedSeed,
  agentTurn: scriptedAgent,
  // A single-step episode's seed and agent in one activity (src/activities/seed-then-agent.ts).
  async seedThenAgentTurn(req) {
    const sandbox = await scriptedSeed(req);
    return { sandbox, agent: await scriptedAgent({ input: req.input, plan: req.plan, sandbox, turn: 0 }), seedSec: 0 };
  },
  async verifyTurn(req) {
    return { step: req.input.taskId, reward: 1, verifier_rewards: { reward: 1 }, failure_kind: null, failure_reason: null, masked: false,
      response_text: 'done', timings: { verify: 1 }, ...(req.teardownAfter ? { tornDown: true as const } : {}) };
  },
  async teardown() {},
} satisfies Partial<Activities>;

const batchInput = (batchId: string, tasks: string[], concurrency: number, continueAsNewAfter: number): BatchInput => ({
  batchId, datasetName: 'd', datasetPath: '/d', tasks: tasks.map((t) => ({ taskId: t, taskPath: `/d/${t}`, digest: 'sha256:x' })),
  repeats: 1, concurrency, agent: 'oracle', agentArgs: {}, imageAliases: {}, episodeSettings: DEFAULT_EPISODE_SETTINGS, continueAsNewAfter,
});

const handleOf = (batchId: string) => new BatchHandle(batchId, undefined, new ResultsFolder(mkdtempSync(join(tmpdir(), 'berth-steer-'))), client);
const runsOf = async (workflowId: string) => (await runChain(client, workflowId)).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let scripted: Awaited<ReturnType<typeof startScriptedWorker>>;
beforeAll(async () => {
  scripted = await startScriptedWorker(queue, activities);
  client = scripted.client;
});
afterAll(() => scripted?.stop());

describe('BatchWorkflow live control across continue-as-new', () => {
  it('a resized window and a pause carry into the next runs; the batch still counts every episode', async () => {
    const tasks = Array.from({ length: 6 }, (_, i) => `${queue}-c${i}`);
    const batchId = `${queue}-b1`;
    const workflowId = `berth/${batchId}`;
    // One start per run: every start continues the batch as new.
    await client.workflow.start('batchWorkflow', { taskQueue: queue, workflowId, args: [batchInput(batchId, tasks, 1, 1)] });
    const h = handleOf(batchId);
    await waitUntil(async () => (await h.progress()).running === 1, 30_000, 'the first episode');

    expect(await h.resize(3)).toMatchObject({ concurrency: 3 });
    await waitUntil(async () => (await h.progress()).running === 3, 30_000, 'three episodes');
    // The third start is seen running a moment before its run hands over and continues as new (episode-v5).
    await waitUntil(async () => (await runsOf(workflowId)) >= 3, 30_000, 'three runs');
    const runsAfterResize = await runsOf(workflowId);
    expect(runsAfterResize).toBeGreaterThanOrEqual(3);
    expect(await h.progress()).toMatchObject({ concurrency: 3, paused: false });

    expect(await h.pause()).toMatchObject({ paused: true, concurrency: 3 });
    for (const t of tasks.slice(0, 3)) released.add(t);
    await waitUntil(async () => (await h.progress()).done === 3, 30_000, 'the three running episodes to finish');
    await sleep(1500);
    expect(await h.progress()).toMatchObject({ paused: true, done: 3, running: 0 });

    expect(await h.resume()).toMatchObject({ paused: false });
    await waitUntil(async () => (await h.progress()).running === 3, 30_000, 'the last three episodes');
    // Each start continues the batch once its running children were told to signal (a round trip each): waited for.
    await waitUntil(async () => (await runsOf(workflowId)) > runsAfterResize, 30_000, 'a run after the resume');
    expect(await h.progress()).toMatchObject({ concurrency: 3, paused: false });
    for (const t of tasks) released.add(t);
    const result = await client.workflow.getHandle(workflowId).result();
    expect(result).toMatchObject({ total: 6, done: 6, running: 0, scored: 6, failed: 0 });
  });

  it('a run continued from a paused one stays paused until resumed', async () => {
    const tasks = [`${queue}-p0`, `${queue}-p1`];
    for (const t of tasks) released.add(t);
    const batchId = `${queue}-b2`;
    const carry: BatchCarry = {
      next: 0, running: [], control: { paused: true, concurrency: 2 },
      progress: { total: 2, done: 0, running: 0, scored: 0, masked: 0, failed: 0, rewardSum: 0 },
    };
    await client.workflow.start('batchWorkflow', { taskQueue: queue, workflowId: `berth/${batchId}`, args: [batchInput(batchId, tasks, 1, 100), carry] });
    const h = handleOf(batchId);
    await sleep(1500);
    expect(await h.progress()).toMatchObject({ paused: true, concurrency: 2, done: 0, running: 0 });
    expect((await client.workflow.count(`BerthBatch = "${batchId}"`)).count).toBe(0);
    await h.resume();
    expect(await h.resize(1)).toMatchObject({ concurrency: 1 });
    expect(await client.workflow.getHandle(`berth/${batchId}`).result()).toMatchObject({ done: 2, scored: 2 });
    // A history with updates in it, for the replay test.
    await recordHistory(client, `berth/${batchId}`, 'batch-steered');
  });

  // A window wider than the continue-as-new limit: a run starts at most `limit` episodes, all in one workflow task,
  // then continues as new (before, it went on starting while the window had room, so a batch of fast episodes never
  // continued as new and its first run's history grew with every episode).
  it('a window wider than the limit starts the limit in one round, then continues as new; every episode counts', async () => {
    const tasks = Array.from({ length: 6 }, (_, i) => `${queue}-w${i}`);
    for (const t of tasks) released.add(t);
    const batchId = `${queue}-b4`;
    const workflowId = `berth/${batchId}`;
    const first = await client.workflow.start('batchWorkflow', { taskQueue: queue, workflowId, args: [batchInput(batchId, tasks, 6, 2)] });
    expect(await client.workflow.getHandle(workflowId).result()).toMatchObject({ total: 6, done: 6, running: 0, scored: 6 });
    expect(await runsOf(workflowId)).toBeGreaterThanOrEqual(3);
    const events = (await client.workflow.getHandle(workflowId, first.firstExecutionRunId).fetchHistory()).events ?? [];
    const kinds = events.map((e) => e.eventType);
    const startsAt = kinds.flatMap((k, i) => (k === temporal.api.enums.v1.EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED ? [i] : []));
    expect(startsAt).toHaveLength(2);
    // Both starts came from one workflow task: no workflow task completed between them.
    const between = kinds.slice(startsAt[0], startsAt[1]);
    expect(between).not.toContain(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    // Its last run (patch batch-starts-together), for the replay test.
    await recordHistory(client, workflowId, 'batch-together');
  });

  // docs/performance-notes.md, The batch reads its children's closing: a child that never reports (terminated from outside,
  // so none of its own code runs) is still counted, from its completion event, and the batch ends.
  it('an episode terminated from outside is counted as failed and the batch still ends', async () => {
    const tasks = [`${queue}-t0`, `${queue}-t1`];
    const batchId = `${queue}-b3`;
    await client.workflow.start('batchWorkflow', { taskQueue: queue, workflowId: `berth/${batchId}`, args: [batchInput(batchId, tasks, 2, 100)] });
    const h = handleOf(batchId);
    await waitUntil(async () => (await h.progress()).running === 2, 30_000, 'both episodes');
    await client.workflow.getHandle(`berth/${batchId}/${tasks[0]}/1`).terminate('test: terminated from outside');
    released.add(tasks[1]!);
    expect(await client.workflow.getHandle(`berth/${batchId}`).result()).toMatchObject({ total: 2, done: 2, running: 0, scored: 1, failed: 1 });
  });
});
