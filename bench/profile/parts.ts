// Pure: one episode's wall time from the client's call to its answer, part by part, so the figure that a single
// episode is compared by (`vs-floor`'s one episode) can be read where it goes: before the batch starts (loading,
// the prepare workflow), the batch's start and the child's first workflow task, each activity from scheduled to
// closed, the workflow tasks between them, the closing, and the client's reading and writing after.
import type { EpisodeTimeline } from './attribution.ts';

export interface EpisodeMarks {
  /** When the client called startBatch. */
  called: number;
  /** The batch workflow's start event. */
  batchStarted: number;
  episode: EpisodeTimeline;
  /** When the client's wait() answered. */
  answered: number;
}

export interface Part { part: string; ms: number }

export function episodeParts(m: EpisodeMarks): Part[] {
  const acts = [...m.episode.activities].sort((a, b) => a.start - b.start);
  const parts: Part[] = [
    { part: 'before the batch (load, prepare)', ms: m.batchStarted - m.called },
    { part: 'batch and episode start', ms: (acts[0]?.start ?? m.episode.end) - m.batchStarted },
  ];
  let between = 0;
  for (let i = 0; i < acts.length; i++) {
    parts.push({ part: acts[i]!.phase, ms: acts[i]!.end - acts[i]!.start });
    if (i > 0) between += acts[i]!.start - acts[i - 1]!.end;
  }
  parts.push({ part: 'between activities', ms: between });
  parts.push({ part: 'closing', ms: m.episode.end - (acts.at(-1)?.end ?? m.episode.end) });
  parts.push({ part: 'client after the episode', ms: m.answered - m.episode.end });
  return parts;
}

/** Mean of each part over several episodes with the same parts in the same order (other shapes are left out). */
export function meanParts(runs: Part[][]): Part[] {
  const shape = (p: Part[]) => p.map((x) => x.part).join('|');
  const first = runs[0];
  if (!first) return [];
  const same = runs.filter((r) => shape(r) === shape(first));
  return first.map((p, i) => ({ part: p.part, ms: same.reduce((s, r) => s + r[i]!.ms, 0) / same.length }));
}
