// How a host's warm pool sizes itself (docs/performance-notes.md, The warm pool: never more of a key than the batch's
// upcoming episodes of it, never beyond its capacity with what it already holds) and what a batch tells it.
import { describe, expect, it } from 'vitest';
import { aheadEpisodeOf, aheadSeedFate, freshSeedSaid, poolCapacity, poolWants, stillUpcoming, surplusFate, upcomingAfterSeed, type PooledSeen, type UpcomingRun } from '../../src/host/warm-pool-plan.ts';
import { upcomingOf } from '../../src/workflows/upcoming.ts';
import type { EpisodeInput } from '../../src/workflows/types.ts';

describe('poolWants', () => {
  it.each<{ what: string; upcoming: UpcomingRun[]; held: Record<string, number>; max: number; seed: string[]; surplus: Record<string, number> }>([
    { what: 'nothing upcoming: nothing seeded', upcoming: [], held: {}, max: 2, seed: [], surplus: {} },
    { what: 'repeats of one task, up to the capacity', upcoming: [{ key: 'a', remaining: 5 }], held: {}, max: 2, seed: ['a', 'a'], surplus: {} },
    { what: 'never more than the upcoming episodes of a key', upcoming: [{ key: 'a', remaining: 1 }], held: {}, max: 4, seed: ['a'], surplus: {} },
    { what: 'held ones count against the capacity', upcoming: [{ key: 'a', remaining: 5 }], held: { a: 1 }, max: 2, seed: ['a'], surplus: {} },
    { what: 'the next tasks in start order, sharing a key', upcoming: [{ key: 'a', remaining: 1 }, { key: 'a', remaining: 1 }, { key: 'b', remaining: 1 }], held: {}, max: 2, seed: ['a', 'a'], surplus: {} },
    { what: 'a run that cannot be seeded ahead is passed over', upcoming: [{ key: undefined, remaining: 3 }, { key: 'b', remaining: 1 }], held: {}, max: 2, seed: ['b'], surplus: {} },
    { what: 'held ones no upcoming episode would claim are surplus', upcoming: [{ key: 'b', remaining: 1 }], held: { a: 2 }, max: 4, seed: ['b'], surplus: { a: 2 } },
    { what: 'a full pool seeds nothing', upcoming: [{ key: 'b', remaining: 3 }], held: { a: 2 }, max: 2, seed: [], surplus: { a: 2 } },
  ])('$what', ({ upcoming, held, max, seed, surplus }) => {
    expect(poolWants(upcoming, held, max)).toEqual({ seed, surplus });
  });

  it.each([[1, 1], [4, 1], [8, 2], [15, 3], [64, 4]])('a host of %i slots pools at most %i', (slots, max) => {
    expect(poolCapacity(slots)).toBe(max);
  });
});

describe('upcomingOf (the batch answering its upcoming query)', () => {
  const ep = (task: string, repeat: number): EpisodeInput => ({ taskId: task, taskPath: `/d/${task}`, digest: `sha-${task}`, repeat } as EpisodeInput);
  const episodes = ['a', 'b', 'c'].flatMap((t) => [ep(t, 1), ep(t, 2)]);

  it.each<{ next: number; paused: boolean; want: Array<[string, number]> }>([
    { next: 0, paused: false, want: [['a', 2], ['b', 2], ['c', 2]] },
    { next: 1, paused: false, want: [['a', 1], ['b', 2], ['c', 2]] },
    { next: 5, paused: true, want: [['c', 1]] },
    { next: 6, paused: false, want: [] },
  ])('from episode $next (paused: $paused)', ({ next, paused, want }) => {
    const got = upcomingOf(episodes, next, paused);
    expect(got.paused).toBe(paused);
    expect(got.upcoming.map((u) => [u.taskId, u.remaining])).toEqual(want);
    expect(got.upcoming[0]?.taskPath).toBe(want[0] ? `/d/${want[0][0]}` : undefined);
  });

  it('tells at most eight runs ahead', () => {
    const many = Array.from({ length: 20 }, (_, i) => ep(`t${i}`, 1));
    expect(upcomingOf(many, 0, false).upcoming.map((u) => u.taskId)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
  });
});

describe('upcomingAfterSeed (the pool refilling from the batch\'s last answer between looks)', () => {
  const run = (task: string, remaining: number) => ({ taskId: task, taskPath: `/d/${task}`, digest: `sha-${task}`, remaining });
  const seeded = (task: string, digest = `sha-${task}`) => ({ taskPath: `/d/${task}`, digest });
  it.each([
    { what: 'one fewer of the seeded task', before: [run('a', 3), run('b', 1)], seeded: seeded('a'), after: [run('a', 2), run('b', 1)] },
    { what: 'a run left empty goes', before: [run('a', 1), run('b', 2)], seeded: seeded('a'), after: [run('b', 2)] },
    { what: 'the first run of its task, when the task comes twice', before: [run('a', 1), run('b', 1), run('a', 2)], seeded: seeded('a'), after: [run('b', 1), run('a', 2)] },
    { what: 'an episode the answer did not count takes one of a later run (the pool seeds less, never more)', before: [run('b', 1), run('a', 2)], seeded: seeded('a'), after: [run('b', 1), run('a', 1)] },
    { what: 'a task not upcoming changes nothing', before: [run('b', 1)], seeded: seeded('a'), after: [run('b', 1)] },
    { what: 'another version of the task (its digest) changes nothing', before: [run('a', 1)], seeded: seeded('a', 'sha-new'), after: [run('a', 1)] },
  ])('$what', ({ before, seeded: s, after }) => {
    const state = { paused: false, upcoming: before };
    const copy = structuredClone(state);
    expect(upcomingAfterSeed(state, s)).toEqual({ paused: false, upcoming: after });
    expect(state).toEqual(copy);
  });

  it('keeps the paused flag', () => {
    expect(upcomingAfterSeed({ paused: true, upcoming: [run('a', 2)] }, seeded('a'))).toEqual({ paused: true, upcoming: [run('a', 1)] });
  });
});

describe('a sandbox seeded ahead for one episode: has the batch started that episode?', () => {
  const ep = (task: string, repeat: number): EpisodeInput => ({ taskId: task, taskPath: `/d/${task}`, digest: `sha-${task}`, repeat } as EpisodeInput);
  const episodes = ['a', 'b'].flatMap((t) => [ep(t, 1), ep(t, 2), ep(t, 3)]);
  const ahead = { upcoming: upcomingOf(episodes, 0, false).upcoming, episodes: episodes.map((e) => ({ workflowId: `${e.taskId}/${e.repeat}`, taskId: e.taskId })) };

  it.each([['a/1', 3], ['a/3', 1], ['b/2', 2]])('%s is placed with %i of its run from it to the run\'s end', (id, left) => {
    expect(aheadEpisodeOf(ahead, id)).toEqual({ taskId: id.split('/')[0], digest: `sha-${id.split('/')[0]}`, left });
  });
  it('an episode not among the first ones has no place', () => {
    expect(aheadEpisodeOf(ahead, 'c/1')).toBeUndefined();
  });

  // The batch answers from its next episode on (upcomingOf): episode i is upcoming while i >= next.
  it.each([0, 1, 2, 3, 4, 5, 6])('with %i episodes started, exactly the later ones are upcoming', (next) => {
    const state = upcomingOf(episodes, next, false);
    const got = ahead.episodes.map((e) => stillUpcoming(state, aheadEpisodeOf(ahead, e.workflowId)!));
    expect(got).toEqual(ahead.episodes.map((_, i) => i >= next));
  });

  it('another version of the task (its digest) in the answer is not this episode', () => {
    expect(stillUpcoming({ paused: false, upcoming: [{ taskId: 'a', taskPath: '/d/a', digest: 'sha-new', remaining: 3 }] }, { taskId: 'a', digest: 'sha-a', left: 1 })).toBe(false);
  });
});

describe('aheadSeedFate', () => {
  const grace = 30_000;
  it.each<{ what: string; upcoming: boolean; slotHere: boolean; startedSeenAt?: number; now: number; want: { startedSeenAt: number | undefined; remove: boolean } }>([
    { what: 'not started: kept however old', upcoming: true, slotHere: false, now: 10 * grace, want: { startedSeenAt: undefined, remove: false } },
    { what: 'started and reserved here: kept (it claims it)', upcoming: false, slotHere: true, startedSeenAt: 0, now: 10 * grace, want: { startedSeenAt: undefined, remove: false } },
    { what: 'started, no slot here yet: kept, the grace starts now', upcoming: false, slotHere: false, now: 5000, want: { startedSeenAt: 5000, remove: false } },
    { what: 'started, no slot here within the grace: kept', upcoming: false, slotHere: false, startedSeenAt: 5000, now: 5000 + grace, want: { startedSeenAt: 5000, remove: false } },
    { what: 'started, no slot here past the grace: removed (it went elsewhere, or ended)', upcoming: false, slotHere: false, startedSeenAt: 5000, now: 5001 + grace, want: { startedSeenAt: 5000, remove: true } },
    { what: 'seen upcoming again (an answer less one too many): the grace starts over', upcoming: true, slotHere: false, startedSeenAt: 5000, now: 5001 + grace, want: { startedSeenAt: undefined, remove: false } },
  ])('$what', ({ upcoming, slotHere, startedSeenAt, now, want }) => {
    expect(aheadSeedFate({ upcoming, slotHere, startedSeenAt, now, graceMs: grace })).toEqual(want);
  });
});

describe('surplusFate', () => {
  const grace = 10_000;
  const held = (name: string, at: number, since?: number) => ({ name, at, since });
  const fate = (h: ReturnType<typeof held>[], n: number, now: number) => {
    const f = surplusFate(h, n, now, grace);
    return { surplus: Object.fromEntries([...f.surplus].map(([p, since]) => [p.name, since])), remove: f.remove.map((p) => p.name) };
  };
  it.each<{ what: string; held: ReturnType<typeof held>[]; n: number; now: number; surplus: Record<string, number>; remove: string[] }>([
    { what: 'none surplus: none marked', held: [held('x', 0)], n: 0, now: 50_000, surplus: {}, remove: [] },
    { what: 'a sandbox seeded long ago that just became surplus is kept (its episode may have just started)', held: [held('x', 0)], n: 1, now: 50_000, surplus: { x: 50_000 }, remove: [] },
    { what: 'surplus for the grace: kept', held: [held('x', 0, 40_000)], n: 1, now: 50_000, surplus: { x: 40_000 }, remove: [] },
    { what: 'surplus past the grace: removed', held: [held('x', 0, 39_999)], n: 1, now: 50_000, surplus: { x: 39_999 }, remove: ['x'] },
    { what: 'one of two: the one already surplus, not the older one', held: [held('old', 0), held('new', 5000, 30_000)], n: 1, now: 50_000, surplus: { new: 30_000 }, remove: ['new'] },
    { what: 'one of two, neither seen surplus: the older', held: [held('new', 5000), held('old', 0)], n: 1, now: 50_000, surplus: { old: 50_000 }, remove: [] },
  ])('$what', ({ held: h, n, now, surplus, remove }) => {
    expect(fate(h, n, now)).toEqual({ surplus, remove });
  });
});

describe('freshSeedSaid: when the worker explains a fresh seed of a key the pool knows', () => {
  const me = 'berth/b/t/2';
  const p = (over: Partial<PooledSeen>): PooledSeen => ({ seeded: false, claimed: false, for: undefined, ...over });
  it.each<{ what: string; keyGood: boolean; pooled: PooledSeen[]; saidBefore: boolean; said: ReturnType<typeof freshSeedSaid> }>([
    { what: 'a key no seed here made yet: seeding fresh is the design', keyGood: false, pooled: [p({})], saidBefore: false, said: 'quiet' },
    { what: 'a seeded sandbox for nobody was left unclaimed: a surprise, said', keyGood: true, pooled: [p({ seeded: true })], saidBefore: false, said: 'say' },
    { what: 'the same surprise again in the batch: said again', keyGood: true, pooled: [p({ seeded: true })], saidBefore: true, said: 'say' },
    { what: 'the one seeded for this very episode was left unclaimed: said', keyGood: true, pooled: [p({ seeded: true, for: me })], saidBefore: true, said: 'say' },
    { what: 'none left (a busy host): said once per batch and key', keyGood: true, pooled: [], saidBefore: false, said: 'say-once' },
    { what: 'none left, said before in this batch: quiet', keyGood: true, pooled: [], saidBefore: true, said: 'quiet' },
    { what: 'still seeding, or seeded for another episode: once', keyGood: true, pooled: [p({}), p({ seeded: true, for: 'berth/b/t/3' })], saidBefore: false, said: 'say-once' },
    { what: 'seeded but claimed by another: once, then quiet', keyGood: true, pooled: [p({ seeded: true, claimed: true })], saidBefore: true, said: 'quiet' },
  ])('$what', ({ keyGood, pooled, saidBefore, said }) => {
    expect(freshSeedSaid({ keyGood, pooled, workflowId: me, saidBefore })).toBe(said);
  });
});
