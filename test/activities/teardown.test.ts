import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostServices, releaseHostServices } from '../../src/host/deps.ts';
import { teardown } from '../../src/activities/host.ts';
import { RemovalJournal } from '../../src/host/removal-journal.ts';
import { containerName } from '../../src/sandbox/names.ts';
import { homePath } from '../../src/config/paths.ts';
import { noContainersLeft } from '../helpers/docker.ts';
import { startWorkerProcess, waitUntil, type WorkerProcess } from '../helpers/worker-process.ts';
import { BASE_IMAGE, provider, teardownAll } from '../sandbox/helpers.ts';

const made: string[] = [];
// This file's own sandbox queue, so no other worker on this engine shares its slots or its removal journal.
const deps = await createHostServices({ provider, hostQueueSuffix: `teardown-${randomBytes(3).toString('hex')}` });
const workers: WorkerProcess[] = [];
afterAll(async () => {
  for (const w of workers) await w.stop();
  await releaseHostServices(deps);
  await teardownAll(made);
});

async function seededEpisode(): Promise<{ episodeId: string; runId: string; name: string }> {
  const episodeId = `berth/vitest-teardown/${randomBytes(4).toString('hex')}/1`;
  const runId = randomBytes(8).toString('hex');
  const name = containerName(episodeId, runId, 'agent');
  made.push(name);
  await provider.seed({ name, labels: { batch: 'vitest-teardown', workflowId: episodeId, role: 'agent' }, image: BASE_IMAGE, env: {}, network: 'none' });
  return { episodeId, runId, name };
}

const exists = (name: string) => provider.docker.getContainer(name).inspect().then(() => true, () => false);

describe('the teardown activity (real Docker)', () => {
  it('returns before the removal, the container is gone soon after, and the slot is freed only then', async () => {
    const ep = await seededEpisode();
    const { slots, remover } = deps;
    const before = slots.inUse;
    expect(await slots.tryReserve(ep.episodeId, ep.runId)).toBe(true);

    await teardown(deps, ep);
    expect(slots.inUse).toBe(before + 1);
    expect(remover.size).toBeGreaterThan(0);

    // The moment the slot is freed, the container must already be gone.
    const deadline = Date.now() + 15_000;
    while (slots.inUse > before) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(await exists(ep.name)).toBe(false);
  });

  it('a second teardown while the first removal is pending neither fails nor frees a slot twice', async () => {
    const [one, two] = [await seededEpisode(), await seededEpisode()];
    const { slots, remover } = deps;
    const before = slots.inUse;
    await slots.tryReserve(one.episodeId, one.runId);
    await slots.tryReserve(two.episodeId, two.runId);

    await teardown(deps, one);
    await teardown(deps, one);
    expect(await remover.drain(15_000)).toBe(0);
    expect(slots.inUse).toBe(before + 1);
    expect(await exists(one.name)).toBe(false);
    expect(await exists(two.name)).toBe(true);

    await teardown(deps, two);
    await teardown(deps, two);
    expect(await remover.drain(15_000)).toBe(0);
    expect(slots.inUse).toBe(before);
    expect(await exists(two.name)).toBe(false);
  });

  it('a worker that starts removes what a worker that died had journaled, and frees its slot', async () => {
    const ep = await seededEpisode();
    const suffix = `resume-${randomBytes(3).toString('hex')}`;
    // What teardown leaves before it returns; the worker that wrote it died before removing.
    const { identity: { queue }, slots } = await createHostServices({ provider, hostQueueSuffix: suffix });
    await slots.tryReserve(ep.episodeId, ep.runId);
    await slots.vacate(ep.episodeId, ep.runId, [ep.name]);
    new RemovalJournal(homePath('removals', queue)).add(`${ep.episodeId}/${ep.runId}`, [ep.name]);
    workers.push(startWorkerProcess({ BERTH_TASK_QUEUE: `test-${suffix}`, BERTH_HOST_QUEUE_SUFFIX: suffix }));
    await noContainersLeft(`berth.workflow=${ep.episodeId}`, 60_000);
    await waitUntil(() => slots.inUse === 0, 15_000, 'the slot freed');
  }, 90_000);
});
