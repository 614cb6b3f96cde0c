// How many sandboxes a host's warm pool seeds ahead, and for which seeds (docs/performance-notes.md, The warm pool). Pure.
import type { EpisodeInput, UpcomingEpisodes } from '../activities/types.ts';

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
