// Which pooled sandbox's slot a waiting episode takes on a full host (src/host/pool-take-over.ts): its own first, so a
// full host never tears down a sandbox seeded ahead for one episode to seat another.
import { describe, expect, it } from 'vitest';
import type { Lease } from '../../src/config/slots.ts';
import { poolLeaseToTake } from '../../src/host/pool-take-over.ts';

const pooled = (name: string, task: string, forEpisode?: string): Lease => ({
  key: `pool/${name}`, workflowId: `pool/${name}`, runId: '', at: 0, by: 'w',
  pool: { name, key: `key-${task}`, task, owner: 'o', ...(forEpisode !== undefined ? { for: forEpisode } : {}) },
});
const episode: Lease = { key: 'ep-x', workflowId: 'ep-x', runId: 'r', at: 0, by: 'w' };

describe('poolLeaseToTake', () => {
  it.each<{ what: string; leases: Lease[]; task?: string; taken: string | undefined }>([
    { what: 'no pooled sandbox: none', leases: [episode], task: 'a', taken: undefined },
    { what: "the one seeded for this episode, before another episode's of its task", leases: [pooled('p1', 'a', 'ep-2'), pooled('p2', 'a', 'ep-1')], task: 'a', taken: 'p2' },
    { what: 'the one seeded for this episode, before one of its task for nobody', leases: [pooled('p1', 'a'), pooled('p2', 'a', 'ep-1')], task: 'a', taken: 'p2' },
    { what: 'its task for nobody, before another task for nobody', leases: [pooled('p1', 'b'), pooled('p2', 'a')], task: 'a', taken: 'p2' },
    { what: "for nobody (another task), before another episode's of its task", leases: [pooled('p1', 'a', 'ep-2'), pooled('p2', 'b')], task: 'a', taken: 'p2' },
    { what: "another episode's of its task, before another episode's of another task", leases: [pooled('p1', 'b', 'ep-3'), pooled('p2', 'a', 'ep-2')], task: 'a', taken: 'p2' },
    { what: "only others' sandboxes of other tasks: the first", leases: [episode, pooled('p1', 'b', 'ep-3'), pooled('p2', 'c', 'ep-4')], task: 'a', taken: 'p1' },
    { what: 'no task given: for nobody first', leases: [pooled('p1', 'a', 'ep-2'), pooled('p2', 'b')], taken: 'p2' },
    { what: 'a lease file written before `for` existed reads as for nobody', leases: [JSON.parse('{"key":"pool/p1","workflowId":"pool/p1","runId":"","at":0,"by":"w","pool":{"name":"p1","key":"k","task":"a","owner":"o"}}') as Lease], task: 'a', taken: 'p1' },
  ])('$what', ({ leases, task, taken }) => {
    expect(poolLeaseToTake(leases, { workflowId: 'ep-1', ...(task !== undefined ? { task } : {}) })?.pool?.name).toBe(taken);
  });
});
