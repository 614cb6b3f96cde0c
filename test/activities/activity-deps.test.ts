// docs/design.md section 6: activities are made by a factory from their dependencies, so two workers in one process
// (other host queues, other engines) share no state. Real engine (only asked for its id; no container is made).
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostServices, releaseHostServices, type HostServices } from '../../src/host/deps.ts';
import { createHostActivities } from '../../src/activities/host-activities.ts';
import { createSharedActivities } from '../../src/activities/shared-activities.ts';
import { readSlots, slotsFile } from '../../src/config/slots.ts';
import { provider } from '../sandbox/helpers.ts';

const tag = randomBytes(3).toString('hex');
const a = await createHostServices({ provider, hostQueueSuffix: `deps-a-${tag}` });
const b = await createHostServices({ provider, hostQueueSuffix: `deps-b-${tag}` });
const released = new Set<HostServices>();
afterAll(async () => {
  for (const d of [a, b]) if (!released.has(d)) await releaseHostServices(d);
});

const token = 'berth-vitest-activity-deps';
const status = (url: string) => fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

describe('two activity sets with different dependencies in one process', () => {
  it('each serves its own host queue, whichever was built last', async () => {
    const [sharedA, sharedB] = [createSharedActivities(a), createSharedActivities(b)];
    expect((await sharedA.hostLease()).queue).toMatch(new RegExp(`-deps-a-${tag}$`));
    expect((await sharedB.hostLease()).queue).toMatch(new RegExp(`-deps-b-${tag}$`));
    // The engine is the same: only the suffix differs.
    expect(a.identity.queue.replace(`-deps-a-${tag}`, '')).toBe(b.identity.queue.replace(`-deps-b-${tag}`, ''));
  });

  it("a slot taken and a teardown scheduled through one set leave the other's slots file and remover alone", async () => {
    const episodeId = `berth/vitest-deps/${tag}/1`;
    const runId = randomBytes(8).toString('hex');
    expect(slotsFile(a.identity.queue)).not.toBe(slotsFile(b.identity.queue));
    expect(await a.slots.tryReserve(episodeId, runId)).toBe(true);
    expect(readSlots(slotsFile(a.identity.queue)).leases.map((l) => l.workflowId)).toEqual([episodeId]);
    expect(readSlots(slotsFile(b.identity.queue)).leases).toEqual([]);
    expect(b.slots.inUse).toBe(0);

    await createHostActivities(a).teardown({ episodeId, runId });
    expect(a.remover.has(`${episodeId}/${runId}`)).toBe(true);
    expect(b.remover.size).toBe(0);
    // Its sandboxes were never made: removing them is a no-op, then A's slot is free.
    expect(await a.remover.drain(15_000)).toBe(0);
    expect(a.slots.inUse).toBe(0);
  });

  it("each has its own model gateway: a token of one is unknown to the other, and stopping one leaves the other serving", async () => {
    const [ga, gb] = [await a.gateway.get(), await b.gateway.get()];
    expect(ga.url).not.toBe(gb.url);
    ga.register({ label: 'vitest', upstreams: {}, prices: {}, limits: {}, spentBefore: { tokens: 0, costUsd: 0 } }, token);
    // A knows the token (no upstream for the path: 404); B refuses it (401).
    expect(await status(ga.url)).toBe(404);
    expect(await status(gb.url)).toBe(401);
    await releaseHostServices(a);
    released.add(a);
    await expect(status(ga.url)).rejects.toThrow();
    expect(await status(gb.url)).toBe(401);
  });
});
