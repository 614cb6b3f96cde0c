import { describe, expect, it } from 'vitest';
import { episodeParts, meanParts, type Part } from '../../bench/profile/parts.ts';

// Called at 0, the batch started at 60; plan 100-120, seed+agent 135-505, verify 520-640; closed 690; answered 730.
const marks = {
  called: 0, batchStarted: 60, answered: 730,
  episode: { start: 70, end: 690, activities: [
    { phase: 'verify', start: 520, end: 640 }, { phase: 'plan', start: 100, end: 120 }, { phase: 'seed+agent', start: 135, end: 505 },
  ] },
};

describe('one episode part by part (bench/profile/parts.ts)', () => {
  it('splits the client-to-answer time into parts that add up to it, activities in the order they ran', () => {
    const parts = episodeParts(marks);
    expect(parts).toEqual([
      { part: 'before the batch (load, prepare)', ms: 60 },
      { part: 'batch and episode start', ms: 40 },
      { part: 'plan', ms: 20 },
      { part: 'seed+agent', ms: 370 },
      { part: 'verify', ms: 120 },
      { part: 'between activities', ms: 30 },
      { part: 'closing', ms: 50 },
      { part: 'client after the episode', ms: 40 },
    ]);
    expect(parts.reduce((s, p) => s + p.ms, 0)).toBe(marks.answered - marks.called);
  });

  it('an episode with no activity (refused at plan) is start, closing and the client', () => {
    const parts = episodeParts({ ...marks, episode: { start: 70, end: 90, activities: [] } });
    expect(parts.map((p) => [p.part, p.ms])).toEqual([
      ['before the batch (load, prepare)', 60], ['batch and episode start', 30], ['between activities', 0], ['closing', 0], ['client after the episode', 640],
    ]);
  });

  it.each([
    ['means each part over runs of one shape', [[{ part: 'a', ms: 10 }, { part: 'b', ms: 20 }], [{ part: 'a', ms: 30 }, { part: 'b', ms: 40 }]], [{ part: 'a', ms: 20 }, { part: 'b', ms: 30 }]],
    ['leaves out a run of another shape', [[{ part: 'a', ms: 10 }], [{ part: 'c', ms: 99 }], [{ part: 'a', ms: 20 }]], [{ part: 'a', ms: 15 }]],
    ['no runs, no parts', [], []],
  ] as Array<[string, Part[][], Part[]]>)('%s', (_name, runs, want) => {
    expect(meanParts(runs)).toEqual(want);
  });
});
