// What a batch answers a host's warm pool (docs/performance-notes.md, The warm pool): the episodes it has not started, in
// its start order, as runs of one task. Pure.
import { UPCOMING_RUNS } from '../config/batch-ids.ts';
import type { EpisodeInput, UpcomingEpisodes } from './types.ts';

export function upcomingOf(episodes: readonly EpisodeInput[], next: number, paused: boolean): UpcomingEpisodes {
  const upcoming: UpcomingEpisodes['upcoming'] = [];
  for (let i = next; i < episodes.length; i++) {
    const ep = episodes[i]!;
    const last = upcoming[upcoming.length - 1];
    if (last && last.taskPath === ep.taskPath && last.digest === ep.digest) {
      last.remaining++;
      continue;
    }
    if (upcoming.length === UPCOMING_RUNS) break;
    upcoming.push({ taskId: ep.taskId, taskPath: ep.taskPath, digest: ep.digest, ...(ep.baseImageId !== undefined ? { baseImageId: ep.baseImageId } : {}), remaining: 1 });
  }
  return { paused, upcoming };
}
