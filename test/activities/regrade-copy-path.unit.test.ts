import { describe, expect, it } from 'vitest';
import { regradeCopyPath } from '../../src/activities/regrade.ts';

// A regrade that reads an attempt from the results store takes only what it copies from a host's disk: the single
// turn's agent/ (and artifacts/ for separate mode), placed as they were under the turn.
describe('regradeCopyPath', () => {
  const both = ['agent', 'artifacts'];
  const cases: Array<{ case: string; path: string; parts: string[]; to: string | null }> = [
    { case: "the agent's trajectory", path: 'turn-1/agent/trajectory.json', parts: both, to: 'agent/trajectory.json' },
    { case: 'a nested agent file', path: 'turn-1/agent/logs/run/out.txt', parts: both, to: 'agent/logs/run/out.txt' },
    { case: 'a collected artifact (separate mode)', path: 'turn-1/artifacts/app/out.txt', parts: both, to: 'artifacts/app/out.txt' },
    { case: 'an artifact when only agent/ is wanted (shared mode)', path: 'turn-1/artifacts/note.txt', parts: ['agent'], to: null },
    { case: "the first verifier's output (the regrade writes its own)", path: 'turn-1/verifier/reward.txt', parts: both, to: null },
    { case: 'a run record at the root', path: 'seed.json', parts: both, to: null },
    { case: 'a folder only named like a part', path: 'turn-1/agents/x', parts: both, to: null },
    { case: 'another turn', path: 'turn-2/agent/trajectory.json', parts: both, to: null },
  ];
  it.each(cases)('$case', ({ path, parts, to }) => {
    expect(regradeCopyPath(path, parts)).toBe(to);
  });
});
