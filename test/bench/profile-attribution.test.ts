import { describe, expect, it } from 'vitest';
import { callKind, callsByPhase, cpuByPhase, phaseOf, phasesAt, type EpisodeTimeline } from '../../bench/profile/attribution.ts';

// Two episodes: A seeds 0-10 and verifies 20-30 (10-20 between activities); B seeds 10-20.
const A: EpisodeTimeline = { start: 0, end: 30, activities: [{ phase: 'seed', start: 0, end: 10 }, { phase: 'verify', start: 20, end: 30 }] };
const B: EpisodeTimeline = { start: 10, end: 20, activities: [{ phase: 'seed', start: 10, end: 20 }] };

describe('profile attribution (bench/profile)', () => {
  it.each([
    [5, [A], { seed: 1 }],
    [15, [A], { workflow: 1 }],
    [15, [A, B], { workflow: 1, seed: 1 }],
    [25, [A, B], { verify: 1 }],
    [40, [A, B], {}],
  ])('at t=%i the phases running are counted', (t, episodes, want) => {
    expect(phasesAt(episodes, t)).toEqual(want);
  });

  it('shares each CPU slice among the phases running at its middle, and a slice with none is idle', () => {
    const samples = [
      { at: 0, cpu: { worker: 0 } },
      { at: 10, cpu: { worker: 1 } }, // middle 5: A seeds
      { at: 20, cpu: { worker: 3 } }, // middle 15: A between, B seeds: 2 shared half and half
      { at: 40, cpu: { worker: 3.5 } }, // middle 30: A verifies (end is inclusive)
      { at: 60, cpu: { worker: 4 } }, // middle 50: nothing runs
    ];
    expect(cpuByPhase(samples, [A, B])).toEqual({ seed: { worker: 2 }, workflow: { worker: 1 }, verify: { worker: 0.5 }, idle: { worker: 0.5 } });
  });

  it('never counts a counter that went backwards (a process gone) as negative time', () => {
    expect(cpuByPhase([{ at: 0, cpu: { worker: 5 } }, { at: 10, cpu: { worker: 2 } }], [A])).toEqual({ seed: { worker: 0 } });
  });

  it('shares engine calls the same way', () => {
    expect(callsByPhase([{ at: 5, kind: 'x' }, { at: 15, kind: 'x' }], [A, B])).toEqual({ seed: { x: 1.5 }, workflow: { x: 0.5 } });
  });

  it.each([
    ['planEpisode', 'plan'], ['planAndPickHost', 'plan'], ['planAndTryHost', 'plan'], ['pickHost', 'plan'], ['seed', 'seed'], ['installAgentLayer', 'seed'], ['seedThenAgentTurn', 'seed+agent'],
    ['agentTurn', 'agent'], ['openaiToolCall', 'agent'], ['verifyTurn', 'verify'], ['teardown', 'teardown'], ['tellBatch', 'tellBatch'],
  ])('activity %s is in phase %s', (type, phase) => expect(phaseOf(type)).toBe(phase));

  it.each([
    ['POST', '/v1.47/containers/create?name=x', 'POST /containers/create'],
    ['POST', '/v1.47/containers/abc123/exec', 'POST /containers/{id}/exec'],
    ['POST', '/exec/deadbeef/start', 'POST /exec/{id}/start'],
    ['GET', '/v1.47/containers/abc/json', 'GET /containers/{id}/json'],
    ['PUT', '/containers/abc/archive?path=/tests', 'PUT /containers/{id}/archive'],
    ['GET', '/_ping', 'GET /_ping'],
  ])('%s %s folds to %s', (method, path, kind) => expect(callKind(method, path)).toBe(kind));
});
