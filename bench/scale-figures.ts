// The arithmetic of `npm run bench -- scale` (bench/scale.ts), kept pure so a unit test holds it: CPU read from
// /proc/<pid>/stat and /proc/stat, and what a run's counters come to per episode.

/** A process's CPU in clock ticks from its /proc/<pid>/stat: utime + stime, plus its reaped children's when asked. */
export function processTicks(stat: string, withChildren = false): number {
  // The command name (field 2) is in parentheses and may hold spaces: the fields that follow start after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).trim().split(/\s+/);
  // rest[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
  const field = (n: number) => Number(rest[n - 3]);
  const own = field(14) + field(15);
  return withChildren ? own + field(16) + field(17) : own;
}

/** Busy and total ticks of all CPUs, from /proc/stat's first line. */
export function machineTicks(procStat: string): { busy: number; total: number } {
  const [, ...f] = procStat.split('\n')[0]!.trim().split(/\s+/);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f.map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

export interface RunCounters {
  episodes: number;
  wallMs: number;
  /** Ticks of the Temporal server's processes, the workers', and the benchmark's own client, over the run. */
  temporalTicks: number;
  workerTicks: number;
  clientMs: number;
  /** The machine's busy and total ticks over the run (all cores). */
  machine: { busy: number; total: number };
  /** historyLength of each episode's workflow, and of the batch workflow once. */
  episodeEvents: number[];
  batchEvents: number;
}

export interface RunFigures {
  episodesPerSec: number;
  temporalMsPerEpisode: number;
  workerMsPerEpisode: number;
  clientMsPerEpisode: number;
  /** Cores busy on average over the run (0 to the number of cores). */
  busyCores: number;
  /** Share of one core each side used over the run. */
  temporalCores: number;
  workerCores: number;
  events: { min: number; median: number; max: number; mean: number };
  /** The batch workflow's events spread over its episodes. */
  batchEventsPerEpisode: number;
}

/** What a run's counters come to per episode and per second; `hz` is the kernel's clock ticks per second (CLK_TCK). */
export function runFigures(c: RunCounters, hz: number, cores: number): RunFigures {
  const ms = (ticks: number) => (ticks * 1000) / hz;
  const sorted = [...c.episodeEvents].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length);
  return {
    episodesPerSec: c.episodes / (c.wallMs / 1000),
    temporalMsPerEpisode: ms(c.temporalTicks) / c.episodes,
    workerMsPerEpisode: ms(c.workerTicks) / c.episodes,
    clientMsPerEpisode: c.clientMs / c.episodes,
    busyCores: c.machine.total > 0 ? (c.machine.busy / c.machine.total) * cores : 0,
    temporalCores: ms(c.temporalTicks) / c.wallMs,
    workerCores: ms(c.workerTicks) / c.wallMs,
    events: { min: sorted[0] ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted[sorted.length - 1] ?? 0, mean },
    batchEventsPerEpisode: c.batchEvents / c.episodes,
  };
}

/**
 * Worker cores that `concurrent` episodes of `episodeSec` seconds each keep busy, from the worker CPU one episode
 * costs: they finish concurrent / episodeSec episodes a second, each costing workerMsPerEpisode.
 */
export function workerCoresFor(concurrent: number, episodeSec: number, workerMsPerEpisode: number): number {
  return ((concurrent / episodeSec) * workerMsPerEpisode) / 1000;
}

/** Episodes a second a server can take at most when its processes have `cores` cores to themselves. */
export function ceilingPerSec(cores: number, msPerEpisode: number): number {
  return (cores * 1000) / msPerEpisode;
}

/**
 * Episodes in flight, from each one's start and close (ms): on average over the span from the first start to the last
 * close (the sum of their lengths over the span, Little's law), and at most at any moment.
 */
export function inFlight(intervals: ReadonlyArray<readonly [number, number]>): { mean: number; peak: number } {
  if (intervals.length === 0) return { mean: 0, peak: 0 };
  const span = Math.max(...intervals.map(([, end]) => end)) - Math.min(...intervals.map(([start]) => start));
  const total = intervals.reduce((sum, [start, end]) => sum + (end - start), 0);
  // A close and a start at the same moment: the close first (the two were never in flight together).
  const edges = intervals.flatMap(([start, end]) => [[start, 1], [end, -1]] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  // An episode that closed the moment it started was still one in flight.
  let peak = 1;
  for (const [, step] of edges) { now += step; peak = Math.max(peak, now); }
  return { mean: span > 0 ? total / span : intervals.length, peak };
}
