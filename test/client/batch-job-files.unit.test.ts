// The batch's last job-files write reads every (task, repeat)'s first attempt even when the listing lags, and a write of
// the episodes closed so far counts the closed ones the listing shows (pure parts).
import { describe, expect, it } from 'vitest';
import { listedClosed, withFirstAttempts } from '../../src/client/batch-job-files.ts';
import type { EpisodeRef } from '../../src/client/episodes.ts';

const ref = (workflowId: string, status = 'COMPLETED', attempt = 1): EpisodeRef =>
  ({ workflowId, taskId: workflowId.split('/')[2]!, repeat: Number(workflowId.split('/')[3]!.replace(/~.*/, '')), attempt, status, taskQueue: 'q', regrade: false });
const meta = { batchId: 'b1', tasks: [{ taskId: 'a', taskPath: '/d/a' }, { taskId: 'c', taskPath: '/d/c' }], repeats: 2 };

describe('withFirstAttempts', () => {
  it.each([
    ['the listing has them all', [ref('berth/b1/a/1'), ref('berth/b1/a/2'), ref('berth/b1/c/1'), ref('berth/b1/c/2')], []],
    ['two not listed yet', [ref('berth/b1/a/1'), ref('berth/b1/c/2')], ['berth/b1/a/2', 'berth/b1/c/1']],
    ['a retry listed, its first attempt not', [ref('berth/b1/a/1~a2', 'COMPLETED', 2), ref('berth/b1/a/2'), ref('berth/b1/c/1'), ref('berth/b1/c/2')], ['berth/b1/a/1']],
    ['nothing listed', [], ['berth/b1/a/1', 'berth/b1/a/2', 'berth/b1/c/1', 'berth/b1/c/2']],
  ] as const)('%s', (_name, listed, added) => {
    const got = withFirstAttempts([...listed], meta);
    expect(got.slice(listed.length).map((e) => e.workflowId)).toEqual(added);
    for (const e of got.slice(listed.length)) expect(e).toMatchObject({ attempt: 1, regrade: false, status: 'RUNNING' });
    expect(got.slice(0, listed.length)).toEqual(listed);
  });

  it('adds nothing when not asked (a write of the episodes closed so far)', () => {
    expect(withFirstAttempts([], null)).toEqual([]);
  });
});

describe('listedClosed', () => {
  const regrade = (workflowId: string, status: string): EpisodeRef => ({ ...ref(workflowId, status, 2), regrade: true });
  it.each([
    ['none listed', [], 0],
    ['running ones are not closed', [ref('berth/b1/a/1', 'RUNNING'), ref('berth/b1/a/2')], 1],
    ['every way of closing counts', [ref('berth/b1/a/1', 'FAILED'), ref('berth/b1/a/2', 'TERMINATED'), ref('berth/b1/c/1', 'TIMED_OUT'), ref('berth/b1/c/2')], 4],
    ['a regrade is not an episode the batch counted', [ref('berth/b1/a/1'), regrade('berth/b1/a/1~a2', 'COMPLETED'), regrade('berth/b1/c/1~a2', 'FAILED')], 1],
  ] as const)('%s', (_name, listed, closed) => {
    expect(listedClosed([...listed])).toBe(closed);
  });
});
