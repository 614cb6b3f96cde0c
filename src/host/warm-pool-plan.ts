// How many sandboxes a host's warm pool seeds ahead, and for which seeds (docs/performance-notes.md, The warm pool). Pure.
import type { EpisodeInput, PrepareAhead, UpcomingEpisodes } from '../activities/types.ts';

export interface UpcomingRun {
  /** The run's seed key; undefined when its seed cannot be made ahead. */
  key: string | undefined;
  /** Its episodes not started yet. */
  remaining: number;
}

/** The pool's largest size on a host of `slots`: a quarter of the slots, between 1 and 4. */
export const poolCapacity = (slots: number): number => Math.min(4, Math.max(1, Math.floor(slots / 4)));

/**
 * The seeds to make now, in order: walking the upcoming episodes in the order the batch starts them, each is served
 * by a pooled sandbox of its key already held or, while the pool has room (`max` in all, held ones counted), by a
 * new one. Never more of a key than its upcoming episodes. `surplus`: held sandboxes no upcoming episode would claim.
 */
export function poolWants(upcoming: readonly UpcomingRun[], held: Readonly<Record<string, number>>, max: number): { seed: string[]; surplus: Record<string, number> } {
  const left: Record<string, number> = { ...held };
  let size = Object.values(held).reduce((a, b) => a + b, 0);
  const seed: string[] = [];
  for (const run of upcoming) {
    if (run.key === undefined) continue;
    for (let i = 0; i < run.remaining; i++) {
      if ((left[run.key] ?? 0) > 0) {
        left[run.key]!--;
        continue;
      }
      if (size >= max) break;
      seed.push(run.key);
      size++;
    }
  }
  const surplus = Object.fromEntries(Object.entries(left).filter(([, n]) => n > 0));
  return { seed, surplus };
}

/**
 * A batch's answer after one of its episodes seeded here: that episode is no longer upcoming (one fewer of the first
 * run of its task; a run left empty goes). An episode the answer did not count (it had started before) takes one of a
 * later repeat: the pool then seeds less until the next answer, never more.
 */
export function upcomingAfterSeed(state: UpcomingEpisodes, seeded: Pick<EpisodeInput, 'taskPath' | 'digest'>): UpcomingEpisodes {
  const i = state.upcoming.findIndex((u) => u.taskPath === seeded.taskPath && u.digest === seeded.digest);
  if (i < 0) return state;
  const upcoming = state.upcoming.map((u) => ({ ...u }));
  if (--upcoming[i]!.remaining === 0) upcoming.splice(i, 1);
  return { paused: state.paused, upcoming };
}

/**
 * One of a batch's first episodes that a sandbox was seeded ahead for, placed in the batch's start order: its task's
 * run (taskId, digest) and how many episodes of that run start with it or after it (`left`).
 */
export interface AheadEpisode {
  taskId: string;
  digest: string;
  left: number;
}

/** Where episode `workflowId` stands among the batch's first episodes, or undefined when it is not one of them. */
export function aheadEpisodeOf(ahead: Pick<PrepareAhead, 'upcoming' | 'episodes'>, workflowId: string): AheadEpisode | undefined {
  const i = ahead.episodes.findIndex((e) => e.workflowId === workflowId);
  if (i < 0) return undefined;
  const { taskId } = ahead.episodes[i]!;
  const run = ahead.upcoming.find((u) => u.taskId === taskId);
  if (!run) return undefined;
  const before = ahead.episodes.slice(0, i).filter((e) => e.taskId === taskId).length;
  return { taskId, digest: run.digest, left: run.remaining - before };
}

/**
 * Whether the batch's answer still counts the episode as not started: the episodes of a run start in order, so it is
 * upcoming while its run has at least `left` left. An ahead episode's run is always within the answer's first runs.
 */
export function stillUpcoming(state: UpcomingEpisodes, ep: AheadEpisode): boolean {
  const run = state.upcoming.find((u) => u.taskId === ep.taskId && u.digest === ep.digest);
  return run !== undefined && run.remaining >= ep.left;
}

/**
 * What becomes of a sandbox seeded ahead for one episode, at a look that asked its batch: kept while the batch has not
 * started the episode, or the episode holds a slot of this host (it seeds here, and claims it). Once neither holds, it
 * is kept `graceMs` more from when that was first seen (`startedSeenAt`: a started episode reserves its slot a little
 * later, longer on a loaded machine), then removed: the episode went to another host, or ended.
 */
export function aheadSeedFate(o: { upcoming: boolean; slotHere: boolean; startedSeenAt: number | undefined; now: number; graceMs: number }): { startedSeenAt: number | undefined; remove: boolean } {
  if (o.upcoming || o.slotHere) return { startedSeenAt: undefined, remove: false };
  const startedSeenAt = o.startedSeenAt ?? o.now;
  return { startedSeenAt, remove: o.now - startedSeenAt > o.graceMs };
}

/**
 * Which of a key's held sandboxes (seeded for no particular episode) are surplus at a look that asked the batch, and
 * which of them go: `n` of them are surplus, those already seen surplus first, then the oldest (`since`: when a look
 * first saw one surplus, kept while it stays so). One goes once it has been surplus for `graceMs`, measured from then
 * and not from its seed: the episode that claims it may have started (so the batch no longer counts it) and be
 * reserving or loading its task, longer on a loaded machine.
 */
export function surplusFate<T extends { at: number; since: number | undefined }>(held: readonly T[], n: number, now: number, graceMs: number): { surplus: Map<T, number>; remove: T[] } {
  const order = [...held].sort((a, b) => (a.since ?? Infinity) - (b.since ?? Infinity) || a.at - b.at);
  const surplus = new Map(order.slice(0, Math.max(0, n)).map((p) => [p, p.since ?? now] as const));
  return { surplus, remove: [...surplus].filter(([, since]) => now - since > graceMs).map(([p]) => p) };
}

/** A pooled sandbox of the key an episode seeds fresh, as the claim saw it. */
export interface PooledSeen { seeded: boolean; claimed: boolean; for: string | undefined }

/**
 * Whether the worker's log explains an episode's fresh seed. A key no seed here has made yet is never waited for (by
 * design: said nowhere). A seeded, unclaimed sandbox this episode could have taken is a surprise: said every time.
 * Anything else (none left, still seeding, seeded for other episodes: a busy host's steady state) is said once per
 * batch and key, so a long batch does not log a line per episode.
 */
export function freshSeedSaid(o: { keyGood: boolean; pooled: readonly PooledSeen[]; workflowId: string; saidBefore: boolean }): 'say' | 'say-once' | 'quiet' {
  if (!o.keyGood) return 'quiet';
  if (o.pooled.some((p) => p.seeded && !p.claimed && (p.for === undefined || p.for === o.workflowId))) return 'say';
  return o.saidBefore ? 'quiet' : 'say-once';
}
