// Pure: which phase each slice of CPU time and each engine call belongs to, when many episodes overlap.

export interface Interval { phase: string; start: number; end: number }
/** One episode: its whole run and the activity intervals inside it (ms since the epoch). */
export interface EpisodeTimeline { start: number; end: number; activities: Interval[] }
/** Cumulative CPU-seconds per process group at one instant. */
export interface CpuSample { at: number; cpu: Record<string, number> }

/** Time inside an episode that no activity covers: workflow tasks and the queues between them. */
export const BETWEEN = 'workflow';

/** How many episodes are in each phase at `t` (an activity's phase, else BETWEEN while the episode runs). */
export function phasesAt(episodes: EpisodeTimeline[], t: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of episodes) {
    if (t < e.start || t > e.end) continue;
    const act = e.activities.find((a) => t >= a.start && t <= a.end);
    const phase = act?.phase ?? BETWEEN;
    counts[phase] = (counts[phase] ?? 0) + 1;
  }
  return counts;
}

/**
 * CPU-seconds per phase per process group: each slice between two samples is shared among the phases the
 * running episodes are in at its middle, in proportion to how many are in each; a slice with none is `idle`.
 */
export function cpuByPhase(samples: CpuSample[], episodes: EpisodeTimeline[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const counts = phasesAt(episodes, (a.at + b.at) / 2);
    const total = Object.values(counts).reduce((x, y) => x + y, 0);
    const shares: Array<[string, number]> = total === 0 ? [['idle', 1]] : Object.entries(counts).map(([p, n]) => [p, n / total]);
    for (const [group, value] of Object.entries(b.cpu)) {
      const delta = Math.max(0, value - (a.cpu[group] ?? 0));
      for (const [phase, share] of shares) {
        const row = (out[phase] ??= {});
        row[group] = (row[group] ?? 0) + delta * share;
      }
    }
  }
  return out;
}

/** Engine calls per phase: each call shared like a CPU slice, by the phases running when it was made. */
export function callsByPhase(calls: Array<{ at: number; kind: string }>, episodes: EpisodeTimeline[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const call of calls) {
    const counts = phasesAt(episodes, call.at);
    const total = Object.values(counts).reduce((x, y) => x + y, 0);
    const shares: Array<[string, number]> = total === 0 ? [['idle', 1]] : Object.entries(counts).map(([p, n]) => [p, n / total]);
    for (const [phase, share] of shares) {
      const row = (out[phase] ??= {});
      row[call.kind] = (row[call.kind] ?? 0) + share;
    }
  }
  return out;
}

/** The phase an activity type belongs to in the profile's table. */
export function phaseOf(activityType: string): string {
  if (/^(plan|pick)/i.test(activityType)) return 'plan';
  if (activityType === 'seedThenAgentTurn') return 'seed+agent';
  if (/^(seed|installAgentLayer|stepSetup)/.test(activityType)) return 'seed';
  if (/^verify|regrade/i.test(activityType)) return 'verify';
  if (/^teardown/.test(activityType)) return 'teardown';
  if (/^(agentTurn|openai)/.test(activityType)) return 'agent';
  return activityType;
}

/** An engine API request line's kind, ids folded: `POST /containers/{id}/exec`. */
export function callKind(method: string, path: string): string {
  const bare = path.split('?')[0]!.replace(/^\/v\d+(\.\d+)?/, '');
  const folded = bare
    .replace(/^\/(containers|exec|networks|volumes|images)\/([^/]+)/, (_m, what: string, id: string) =>
      (what === 'containers' && id === 'create') || (what === 'networks' && id === 'create') || (what === 'images' && id === 'json') || (what === 'containers' && id === 'json') ? `/${what}/${id}` : `/${what}/{id}`);
  return `${method} ${folded}`;
}

/** Mean wall seconds per episode in each phase, and `workflow` for the time no activity covers. */
export function phaseWall(timelines: EpisodeTimeline[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of timelines) {
    let inActivities = 0;
    for (const a of t.activities) { out[a.phase] = (out[a.phase] ?? 0) + (a.end - a.start) / 1000; inActivities += a.end - a.start; }
    out.workflow = (out.workflow ?? 0) + Math.max(0, t.end - t.start - inActivities) / 1000;
  }
  for (const k of Object.keys(out)) out[k] = out[k]! / timelines.length;
  return out;
}
