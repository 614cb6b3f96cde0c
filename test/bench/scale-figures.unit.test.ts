import { describe, expect, it } from 'vitest';
import { ceilingPerSec, inFlight, machineTicks, processTicks, runFigures, workerCoresFor } from '../../bench/scale-figures.ts';

// A /proc/<pid>/stat line whose command name holds spaces and a ')': utime 907, stime 213, cutime 40, cstime 2.
const stat = '7430 (temporal (x) y) S 1 7430 7430 0 -1 4194304 61839 0 3 0 907 213 40 2 20 0 10 0 1129923 1592258560 56593';

describe('CPU from /proc (bench/scale-figures.ts)', () => {
  it.each([
    ['own ticks are utime + stime, read after the last parenthesis', false, 1120],
    ['with children, the reaped children\'s too (postgres backends that came and went)', true, 1162],
  ])('%s', (_name, children, want) => {
    expect(processTicks(stat, children)).toBe(want);
  });

  it('machine ticks: busy is everything but idle and iowait, total adds them', () => {
    expect(machineTicks('cpu  100 5 50 800 20 3 2 1 0 0\ncpu0 1 2 3\n')).toEqual({ busy: 161, total: 981 });
  });
});

describe('a run per episode (bench/scale-figures.ts)', () => {
  const counters = {
    episodes: 200, wallMs: 40_000, temporalTicks: 3000, workerTicks: 1600, clientMs: 2000,
    machine: { busy: 6000, total: 8000 }, episodeEvents: [29, 31, 29, 40, 30], batchEvents: 1000,
  };

  it('turns counters into rates, CPU per episode, cores and events', () => {
    expect(runFigures(counters, 100, 2)).toEqual({
      episodesPerSec: 5,
      temporalMsPerEpisode: 150, workerMsPerEpisode: 80, clientMsPerEpisode: 10,
      busyCores: 1.5, temporalCores: 0.75, workerCores: 0.4,
      events: { min: 29, median: 30, max: 40, mean: 31.8 },
      batchEventsPerEpisode: 5,
    });
  });

  it('a kernel with another clock rate scales the CPU, not the rate', () => {
    const f = runFigures(counters, 250, 2);
    expect([f.episodesPerSec, f.temporalMsPerEpisode, f.workerMsPerEpisode]).toEqual([5, 60, 32]);
  });

  it.each([
    ['1,000 episodes of 60 s at 80 ms each keep 1.33 worker cores busy', 1000, 60, 80, 4 / 3],
    ['of 600 s, a tenth of that', 1000, 600, 80, 4 / 30],
    ['2,000 of 60 s, twice', 2000, 60, 80, 8 / 3],
  ])('%s', (_name, concurrent, sec, ms, want) => {
    expect(workerCoresFor(concurrent, sec, ms)).toBeCloseTo(want, 10);
  });

  it('a server with 2 cores at 150 ms an episode takes at most 13.3 a second', () => {
    expect(ceilingPerSec(2, 150)).toBeCloseTo(13.333, 3);
  });
});

describe('episodes in flight (bench/scale-figures.ts)', () => {
  it.each([
    ['none', [], { mean: 0, peak: 0 }],
    ['two after each other, touching: one at a time', [[0, 10], [10, 20]], { mean: 1, peak: 1 }],
    ['three overlapping over 20 ms: 2 on average, 3 at most', [[0, 20], [0, 10], [5, 15]], { mean: 2, peak: 3 }],
    ['one instant episode', [[5, 5]], { mean: 1, peak: 1 }],
  ] as Array<[string, Array<[number, number]>, { mean: number; peak: number }]>)('%s', (_name, intervals, want) => {
    expect(inFlight(intervals)).toEqual(want);
  });
});
