// The warm pool on the real engine and a real Temporal worker on this file's own queues (docs/performance-notes.md, The
// warm pool): episodes claim a sandbox seeded ahead (across tasks that share a seed; the first ones seeded by the host
// that prepared the batch's tasks, while the batch started), the pool holds
// slots and drains when its batch ends, is paused or is cancelled, `warmPool: false` (berth run --no-warm-pool) turns
// it off for a batch, and the janitor and the slot reconciler remove what a dead worker's pool left.
import Docker from 'dockerode';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeOrphanSandboxes } from '../../src/host/host-upkeep.ts';
import { poolOwnerTag } from '../../src/host/pool-owner.ts';
import { reconcileSlots } from '../../src/host/slot-reconcile.ts';
import { HostSlots } from '../../src/host/slots.ts';
import { Remover } from '../../src/host/remover.ts';
import { RemovalJournal } from '../../src/host/removal-journal.ts';
import { startBatch } from '../../src/client/batch.ts';
import { batchWorkflowId } from '../../src/client/episodes.ts';
import { aheadOf, prepareInput, prepareTasks } from '../../src/client/prepare.ts';
import { DEFAULT_EPISODE_SETTINGS } from '../../src/activities/types.ts';
import { loadDataset } from '../../src/task/index.ts';
import { episodeWorkflowId } from '../../src/workflows/public.ts';
import type { BatchInput, ResultRow } from '../../src/workflows/types.ts';
import { readSlots, slotsFile } from '../../src/config/slots.ts';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { containerName, LABEL_BATCH, LABEL_POOL, LABEL_WORKFLOW, POOL_NAME_PREFIX } from '../../src/sandbox/names.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { echoTask, sleepyTasks, writeDataset } from '../helpers/tasks.ts';
import { claimedSeed, eventually, pooledOn, seedResult } from '../helpers/warm-pool.ts';
import { teardownAll } from '../sandbox/helpers.ts';

const docker = new Docker();
const results = () => mkdtempSync(join(tmpdir(), 'berth-warm-pool-'));
const poolLeases = (queue: string) => readSlots(slotsFile(queue)).leases.filter((l) => l.pool);

/** A batch of one task's episodes (one by default), as startBatch would start it, and its tasks prepared with the batch ahead. */
async function preparedAhead(cluster: TestCluster, task: string | Record<string, string>, toml?: string, repeats = 1): Promise<BatchInput> {
  const dataset = writeDataset(typeof task === 'string' ? echoTask(task, 'ok', toml) : task);
  const loaded = await loadDataset(dataset);
  const batchId = `vitest-ahead-${randomBytes(3).toString('hex')}`;
  const input: BatchInput = {
    batchId, datasetName: 'd', datasetPath: loaded.root, tasks: loaded.tasks.map((t) => ({ taskId: t.id, taskPath: t.path, digest: t.digest })),
    repeats, concurrency: 1, agent: 'oracle', agentArgs: {}, imageAliases: {}, episodeSettings: DEFAULT_EPISODE_SETTINGS,
  };
  const toPrepare = { root: loaded.root, imageAliases: {}, separateVerifierForArtifacts: false };
  const { outcomes } = await prepareTasks(cluster.client, { ...prepareInput(toPrepare, input.tasks), ...aheadOf(input) }, cluster.taskQueue);
  const pins = new Map(outcomes.flatMap((o) => (o.ok && o.baseImageId ? [[o.taskId, o.baseImageId] as const] : [])));
  input.tasks = input.tasks.map((t) => (pins.has(t.taskId) ? { ...t, baseImageId: pins.get(t.taskId)! } : t));
  return input;
}

describe('the warm pool (docs/performance-notes.md, The warm pool)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('warm-pool'); });
  afterAll(async () => { await cluster?.stop(); });

  it('episodes claim a sandbox seeded ahead, across tasks sharing a seed; the pool drains when the batch ends', async () => {
    // Three tasks with one seed (same image and settings), two repeats each, one at a time.
    const dataset = writeDataset({ ...echoTask('a'), ...echoTask('b'), ...echoTask('c') });
    const handle = await startBatch({ dataset, repeats: 2, concurrency: 1, resultsDir: results(), taskQueue: cluster.taskQueue, client: cluster.client });
    const rows = (await handle.wait()).rows;
    expect(rows.map((r) => r.reward)).toEqual([1, 1, 1, 1, 1, 1]);
    const claimed = await Promise.all(rows.map(async (r) => (await seedResult(cluster.client, r.workflow_id))?.claimed === true));
    // Every episode finds a sandbox the pool seeded: the first one seeded as the batch's tasks were prepared here
    // (its claim waits for the pool to register it), each later one while the one before it ran (task b's and c's
    // from a's run).
    expect(claimed).toEqual(rows.map(() => true));
    // A claim is inside the seed activity: a claimed single-step episode's history is as long as a fresh one's (24:
    // its plan a local activity and its seed and agent in one activity under the one episode-v8 marker, and no signal
    // to its batch before it closes: docs/performance-notes.md; 42 before, 34 with the signal, 29 before episode-v8).
    const lengths = await Promise.all(rows.map(async (r) => (await cluster.client.workflow.getHandle(r.workflow_id).describe()).historyLength));
    expect(lengths).toEqual(rows.map(() => 24));
    await eventually('pooled sandboxes after the batch ended', () => pooledOn(cluster.hostQueue),
      (list) => list.filter((c) => c.name.startsWith(POOL_NAME_PREFIX)).length === 0);
    await eventually('pool slots after the batch ended', async () => poolLeases(cluster.hostQueue), (l) => l.length === 0);
  }, 300_000);

  // startBatch starts the batch as soon as its tasks are prepared, and its first episode waits for the sandbox seeded
  // meanwhile; here the batch starts only once that sandbox is ready, so the claim does not depend on timing.
  it("the host that prepares a batch's tasks seeds its first episode while the batch starts, and that episode claims it", async () => {
    const input = await preparedAhead(cluster, 'first');
    const forBatch = async () => (await pooledOn(cluster.hostQueue)).filter((c) => c.labels[LABEL_BATCH] === input.batchId);
    const [seeded] = await eventually('a sandbox seeded for the batch before it starts', forBatch, (l) => l.length === 1, 60_000);
    const episode = episodeWorkflowId(input.batchId, 'first', 1);
    // Made for that episode: it carries the episode's workflow label, as the episode's own seed would.
    expect(seeded!.labels[LABEL_WORKFLOW]).toBe(episode);
    await cluster.client.workflow.start('batchWorkflow', { taskQueue: cluster.taskQueue, workflowId: batchWorkflowId(input.batchId), args: [input] });
    await cluster.client.workflow.getHandle(batchWorkflowId(input.batchId)).result();
    const row = await cluster.client.workflow.getHandle(episode).result() as ResultRow;
    expect(row.reward).toBe(1);
    expect(await claimedSeed(cluster.client, episode)).toBe(true);
    await eventually('pool slots after the batch ended', async () => poolLeases(cluster.hostQueue), (l) => l.length === 0);
  }, 300_000);

  // A loaded machine, on purpose: the batch starts 12 s after what its prepare seeded, and each episode runs 12 s, so
  // both sandboxes are older than the pool's 10 s grace when their episodes reach them. Each is still claimed by the
  // episode it was seeded for (that very container, not a later seed): before, each went 10 s after its seed began,
  // once the batch had started (the second episode's always, the first one's when a look came before its claim).
  it('each of the first episodes claims the very sandbox seeded for it, however late the batch and the episode before it reach it', async () => {
    const input = await preparedAhead(cluster, sleepyTasks(1, 12), undefined, 2);
    const episodes = [1, 2].map((r) => episodeWorkflowId(input.batchId, 't0', r));
    const seededFor = async () => Object.fromEntries((await docker.listContainers({ all: true, filters: { label: [`${LABEL_POOL}=${cluster.hostQueue}`, `${LABEL_BATCH}=${input.batchId}`] } }))
      .map((c) => [c.Labels[LABEL_WORKFLOW] ?? '', c.Id]));
    const ids = await eventually('a sandbox seeded for each episode', seededFor, (m) => episodes.every((e) => m[e] !== undefined), 60_000);
    await new Promise((r) => setTimeout(r, 12_000));
    await cluster.client.workflow.start('batchWorkflow', { taskQueue: cluster.taskQueue, workflowId: batchWorkflowId(input.batchId), args: [input] });
    await cluster.client.workflow.getHandle(batchWorkflowId(input.batchId)).result();
    for (const episode of episodes) {
      expect((await cluster.client.workflow.getHandle(episode).result() as ResultRow).reward, episode).toBe(1);
      expect((await seedResult(cluster.client, episode))?.id, episode).toBe(ids[episode]);
    }
    await eventually('pool slots after the batch ended', async () => poolLeases(cluster.hostQueue), (l) => l.length === 0);
  }, 300_000);

  it("the first episode claims a seed its prepare began that the task's healthcheck then fails: it fails with that failure, not after a second seed", async () => {
    // Unhealthy only once its start period is over: the episode claims the seed long before it fails.
    const toml = '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[environment.healthcheck]\ncommand = "echo not-today; exit 1"\n' +
      'start_period_sec = 15\nstart_interval_sec = 1\ninterval_sec = 1\ntimeout_sec = 2\nretries = 1\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 60\n';
    // Watched live: the engine keeps only its last 256 events for a later `since`, fewer than a busy CI makes.
    const created: string[] = [];
    const watch = await docker.getEvents({ filters: { type: ['container'], event: ['create'] } }) as NodeJS.ReadableStream & { destroy(): void };
    watch.on('data', (chunk: Buffer) => { for (const line of String(chunk).split('\n').filter(Boolean)) created.push(line); });
    const input = await preparedAhead(cluster, 'unhealthy', toml);
    const forBatch = async () => (await pooledOn(cluster.hostQueue)).filter((c) => c.labels[LABEL_BATCH] === input.batchId);
    await eventually('a sandbox seeding for the batch before it starts', forBatch, (l) => l.length === 1, 60_000);
    await cluster.client.workflow.start('batchWorkflow', { taskQueue: cluster.taskQueue, workflowId: batchWorkflowId(input.batchId), args: [input] });
    await cluster.client.workflow.getHandle(batchWorkflowId(input.batchId)).result();
    const row = await cluster.client.workflow.getHandle(episodeWorkflowId(input.batchId, 'unhealthy', 1)).result() as ResultRow;
    expect(row).toMatchObject({ mask_sample: true, failure_kind: 'harbor:seed_failed' });
    expect(row.failure_reason).toContain('not-today');
    // The seed's three attempts made two sandboxes after the pool's: the first attempt took the pool's failure.
    watch.destroy();
    const ofBatch = created.filter((line) => (JSON.parse(line) as { Actor: { Attributes: Record<string, string> } }).Actor.Attributes[LABEL_BATCH] === input.batchId);
    expect(ofBatch.length).toBe(3);
  }, 300_000);

  // Task Folder Verifiers § Environment variables and secrets: "A missing required value fails the episode before any
  // sandbox starts", so nothing is seeded ahead for a task its episode's plan refuses.
  it("a task its episode's plan refuses (an unset variable in [verifier].env) is seeded nothing ahead; the batch's other task is", async () => {
    const refused = '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[verifier.env]\nJUDGE = "${BERTH_POOL_UNSET_KEY}"\n';
    delete process.env.BERTH_POOL_UNSET_KEY;
    // Different settings, so a seed of one could never stand for the other's.
    const fine = '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/srv"\n';
    const input = await preparedAhead(cluster, { ...echoTask('refused', 'ok', refused), ...echoTask('fine', 'ok', fine) });
    const forBatch = async () => (await pooledOn(cluster.hostQueue)).filter((c) => c.labels[LABEL_BATCH] === input.batchId);
    // Both tasks' seeds would be made in one look of the pool: once the fine one's is there, the refused one's would be.
    const seeded = await eventually('a sandbox seeded for the batch', forBatch, (l) => l.length >= 1, 60_000);
    await new Promise((r) => setTimeout(r, 2500));
    expect((await forBatch()).map((c) => c.labels[LABEL_WORKFLOW])).toEqual([episodeWorkflowId(input.batchId, 'fine', 1)]);
    expect(seeded.map((c) => c.labels[LABEL_WORKFLOW])).toEqual([episodeWorkflowId(input.batchId, 'fine', 1)]);
    await eventually('the sandbox seeded for a batch that never started', forBatch, (l) => l.length === 0, 90_000);
  }, 300_000);

  it('a batch prepared here that never starts (its client gave up): what was seeded for it is removed', async () => {
    const input = await preparedAhead(cluster, 'never');
    const forBatch = async () => (await pooledOn(cluster.hostQueue)).filter((c) => c.labels[LABEL_BATCH] === input.batchId);
    await eventually('a sandbox seeded for the batch', forBatch, (l) => l.length === 1, 60_000);
    // AHEAD_START_MS (30 s) after the prepare, then the pool's next look.
    await eventually('the sandbox seeded for a batch that never started', forBatch, (l) => l.length === 0, 90_000);
    await eventually('its slot', async () => poolLeases(cluster.hostQueue), (l) => l.length === 0);
  }, 300_000);

  it('the pool drains when its batch is paused, fills again on resume, and drains when the batch is cancelled', async () => {
    const toml = '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n';
    const slow = { ...echoTask('slow', 'ok', toml), 'slow/solution/solve.sh': '#!/bin/bash\nsleep 20\necho ok > out.txt\n' };
    const handle = await startBatch({ dataset: writeDataset(slow), repeats: 4, concurrency: 1, resultsDir: results(), taskQueue: cluster.taskQueue, client: cluster.client });
    const unclaimed = async () => (await pooledOn(cluster.hostQueue)).filter((c) => c.name.startsWith(POOL_NAME_PREFIX));
    // A pooled sandbox while the batch runs, holding a slot of the host. Looked at together and until both hold: the
    // first episode claims what its prepare seeded moments after the start (its slot taken over, then the rename).
    const holding = async () => {
      const names = new Set(poolLeases(cluster.hostQueue).map((l) => l.pool!.name));
      return (await unclaimed()).filter((c) => names.has(c.name));
    };
    await eventually('a pooled sandbox holding a slot while the batch runs', holding, (l) => l.length >= 1, 60_000);
    await handle.pause();
    await eventually('pooled sandboxes of a paused batch', unclaimed, (l) => l.length === 0);
    await handle.resume();
    await eventually('a pooled sandbox after resume', unclaimed, (l) => l.length >= 1, 60_000);
    await handle.cancel();
    await eventually('pooled sandboxes of a cancelled batch', unclaimed, (l) => l.length === 0);
    await eventually('pool slots of a cancelled batch', async () => poolLeases(cluster.hostQueue), (l) => l.length === 0);
  }, 300_000);

  it('a batch started with warmPool: false (berth run --no-warm-pool) seeds every episode fresh and is pooled nothing', async () => {
    const dataset = writeDataset({ ...echoTask('x'), ...echoTask('y') });
    const handle = await startBatch({ dataset, repeats: 2, concurrency: 1, warmPool: false, resultsDir: results(), taskQueue: cluster.taskQueue, client: cluster.client });
    const rows = (await handle.wait()).rows;
    expect(rows.map((r) => r.reward)).toEqual([1, 1, 1, 1]);
    for (const r of rows) expect((await seedResult(cluster.client, r.workflow_id))?.claimed).toBeUndefined();
    expect(await pooledOn(cluster.hostQueue)).toEqual([]);
  }, 300_000);
});

describe("what a dead worker's pool left", () => {
  const provider = new DockerSandboxProvider();
  const made: string[] = [];
  afterAll(async () => { await teardownAll(made); });

  /** A pid that ran on this machine and no longer does. */
  function deadPid(): number {
    const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    return Number(r.stdout);
  }

  async function pooledContainer(queue: string, owner: string): Promise<string> {
    const name = `${POOL_NAME_PREFIX}${randomBytes(6).toString('hex')}`;
    made.push(name);
    await provider.seed({ name, labels: { batch: 'vitest-pool', workflowId: '', role: 'agent', pool: { queue, owner, key: 'k' } }, image: 'berth-base:bookworm', env: {}, network: 'none' });
    return name;
  }

  const exists = (name: string) => docker.getContainer(name).inspect().then(() => true, () => false);

  it('the janitor removes pooled sandboxes whose worker is gone, keeps a live one, and judges a claimed one by its episode', async () => {
    const queue = `vitest-pool-${randomBytes(3).toString('hex')}`;
    const orphan = await pooledContainer(queue, `${hostname()}:${deadPid()}:1`);
    const live = await pooledContainer(queue, poolOwnerTag());
    // Claimed ones (renamed to an episode's name): two whose episodes hold a slot on the queue (one still running,
    // one closed), and one whose episode holds none there.
    const slots = new HostSlots(slotsFile(queue), 4);
    const episode = () => ({ workflowId: `berth/vitest-pool/${randomBytes(3).toString('hex')}/1`, runId: randomBytes(3).toString('hex') });
    const [running, closed, away] = [episode(), episode(), episode()];
    await slots.tryReserve(running.workflowId, running.runId);
    await slots.tryReserve(closed.workflowId, closed.runId);
    const [runningName, closedName, awayName] = [running, closed, away].map((e) => containerName(e.workflowId, e.runId, 'agent'));
    made.push(runningName!, closedName!, awayName!);
    for (const to of [runningName!, closedName!, awayName!]) await docker.getContainer(await pooledContainer(queue, poolOwnerTag())).rename({ name: to });
    const asked: string[] = [];
    // Every other sandbox on this shared engine is called live: the janitor must leave other tests' containers alone.
    const report = await removeOrphanSandboxes(async (id) => { asked.push(id); return id !== closed.workflowId; }, provider);
    expect(await exists(orphan)).toBe(false);
    expect(await exists(live)).toBe(true);
    expect(await exists(runningName!)).toBe(true);
    expect(await exists(closedName!)).toBe(false);
    expect(await exists(awayName!)).toBe(false);
    expect(asked).toEqual(expect.arrayContaining([running.workflowId, closed.workflowId]));
    // Only this test's: on a shared engine the janitor also (rightly) removes pooled sandboxes other test files'
    // stopped workers left behind.
    const ours = new Set([orphan, live, runningName!, closedName!, awayName!]);
    expect(report.removed.map((r) => r.name).filter((n) => ours.has(n)).sort()).toEqual([orphan, closedName!, awayName!].sort());
    slots.close();
  }, 120_000);

  it("the slot reconciler removes a dead worker's pooled sandbox and frees its slot; a live worker's stays", async () => {
    const queue = `vitest-pool-${randomBytes(3).toString('hex')}`;
    const slots = new HostSlots(slotsFile(queue), 4);
    const deadOwner = `${hostname()}:${deadPid()}:1`;
    const orphan = await pooledContainer(queue, deadOwner);
    const live = await pooledContainer(queue, poolOwnerTag());
    await slots.reservePool({ name: orphan, key: 'k', task: 'd', owner: deadOwner });
    await slots.reservePool({ name: live, key: 'k', task: 'd', owner: poolOwnerTag() });
    const remover = new Remover({ remove: (name) => provider.teardown(name), journal: new RemovalJournal(mkdtempSync(join(tmpdir(), 'berth-pool-journal-'))) });
    const done = await reconcileSlots({ slots, remover, isOpen: async () => true, seedBoundMs: 60_000 });
    expect(done).toEqual([expect.stringContaining(`pool/${orphan}`)]);
    expect(await remover.drain(30_000)).toBe(0);
    expect(await exists(orphan)).toBe(false);
    expect(await exists(live)).toBe(true);
    expect(slots.leases().map((l) => l.pool?.name)).toEqual([live]);
    slots.close();
  }, 120_000);
});
