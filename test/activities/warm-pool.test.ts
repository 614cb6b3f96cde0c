// The warm pool on the real engine and a real Temporal worker on this file's own queues (docs/performance.md, The
// warm pool): episodes after the first claim a sandbox seeded ahead (across tasks that share a seed), the pool holds
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
import { removeOrphanSandboxes } from '../../src/activities/host-upkeep.ts';
import { poolOwnerTag } from '../../src/activities/pool-owner.ts';
import { reconcileSlots } from '../../src/activities/slot-reconcile.ts';
import { HostSlots } from '../../src/activities/slots.ts';
import { Remover } from '../../src/activities/remover.ts';
import { RemovalJournal } from '../../src/activities/removal-journal.ts';
import { startBatch } from '../../src/client/batch.ts';
import { readSlots, slotsFile } from '../../src/config/slots.ts';
import { DockerSandboxProvider } from '../../src/sandbox/docker/provider.ts';
import { containerName, POOL_NAME_PREFIX } from '../../src/sandbox/names.ts';
import { startTestWorkers, type TestCluster } from '../helpers/temporal.ts';
import { echoTask, writeDataset } from '../helpers/tasks.ts';
import { eventually, pooledOn, seedResult } from '../helpers/warm-pool.ts';
import { teardownAll } from '../sandbox/helpers.ts';

const docker = new Docker();
const results = () => mkdtempSync(join(tmpdir(), 'berth-warm-pool-'));
const poolLeases = (queue: string) => readSlots(slotsFile(queue)).leases.filter((l) => l.pool);

describe('the warm pool (docs/performance.md, The warm pool)', () => {
  let cluster: TestCluster;
  beforeAll(async () => { cluster = await startTestWorkers('warm-pool'); });
  afterAll(async () => { await cluster?.stop(); });

  it('episodes after the first claim a sandbox seeded ahead, across tasks sharing a seed; the pool drains when the batch ends', async () => {
    // Three tasks with one seed (same image and settings), two repeats each, one at a time.
    const dataset = writeDataset({ ...echoTask('a'), ...echoTask('b'), ...echoTask('c') });
    const handle = await startBatch({ dataset, repeats: 2, concurrency: 1, resultsDir: results(), taskQueue: cluster.taskQueue, client: cluster.client });
    const rows = (await handle.wait()).rows;
    expect(rows.map((r) => r.reward)).toEqual([1, 1, 1, 1, 1, 1]);
    const claimed = await Promise.all(rows.map(async (r) => (await seedResult(cluster.client, r.workflow_id))?.claimed === true));
    const first = rows.findIndex((r) => r.task_id === 'a' && r.repeat === 1);
    expect(claimed[first]).toBe(false);
    // Every later episode finds a sandbox the pool seeded while the one before it ran (task b's and c's from a's run).
    expect(claimed.filter(Boolean).length).toBe(5);
    expect(rows.filter((_, i) => claimed[i]).map((r) => r.task_id).sort()).toEqual(['a', 'b', 'b', 'c', 'c']);
    // A claim is inside the seed activity: a claimed single-step episode's history is as long as a fresh one's (34:
    // its seed and agent in one activity under the one episode-v4 marker, docs/performance.md; 42 before).
    const lengths = await Promise.all(rows.map(async (r) => (await cluster.client.workflow.getHandle(r.workflow_id).describe()).historyLength));
    expect(lengths).toEqual(rows.map(() => 34));
    await eventually('pooled sandboxes after the batch ended', () => pooledOn(cluster.hostQueue),
      (list) => list.filter((c) => c.name.startsWith(POOL_NAME_PREFIX)).length === 0);
    await eventually('pool slots after the batch ended', async () => poolLeases(cluster.hostQueue), (l) => l.length === 0);
  }, 300_000);

  it('the pool drains when its batch is paused, fills again on resume, and drains when the batch is cancelled', async () => {
    const toml = '[environment]\ndocker_image = "berth-base:bookworm"\nworkdir = "/app"\n[agent]\ntimeout_sec = 120\n[verifier]\ntimeout_sec = 60\n';
    const slow = { ...echoTask('slow', 'ok', toml), 'slow/solution/solve.sh': '#!/bin/bash\nsleep 20\necho ok > out.txt\n' };
    const handle = await startBatch({ dataset: writeDataset(slow), repeats: 4, concurrency: 1, resultsDir: results(), taskQueue: cluster.taskQueue, client: cluster.client });
    const unclaimed = async () => (await pooledOn(cluster.hostQueue)).filter((c) => c.name.startsWith(POOL_NAME_PREFIX));
    const held = await eventually('a pooled sandbox while the batch runs', unclaimed, (l) => l.length >= 1, 60_000);
    // The pool's sandbox holds a slot of the host.
    expect(poolLeases(cluster.hostQueue).map((l) => l.pool!.name)).toEqual(expect.arrayContaining(held.map((c) => c.name)));
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
    expect(report.removed.map((r) => r.name).sort()).toEqual([orphan, closedName!, awayName!].sort());
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
