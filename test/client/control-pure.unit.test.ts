import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newestEpisodes, nextAttempt, type EpisodeRef } from '../../src/client/episodes.ts';
import { named } from '../../src/client/retry.ts';
import { progressLine } from '../../src/cli/progress.ts';
import { copiedFromManifest } from '../../src/verify/artifacts.ts';
import { concurrencyProblem } from '../../src/workflows/public.ts';

describe('the concurrency window rule (berth resize, the batch update validator)', () => {
  it.each([[1, null], [6, null], [500, null]])('%j is a window', (n, expected) => {
    expect(concurrencyProblem(n)).toBe(expected);
  });
  it.each([[0], [-2], [2.5], [Number.NaN], ['4'], [null], [undefined]])('%j is refused with the fix', (n) => {
    expect(concurrencyProblem(n)).toMatch(/whole number ≥ 1, got .*; e\.g\. berth resize BATCH 4/);
  });
});

describe('the progress line', () => {
  const p = { total: 30, done: 4, running: 2, scored: 4, masked: 0, failed: 0, rewardSum: 3 };
  it('shows a paused batch as paused, with its window', () => {
    expect(progressLine({ ...p, paused: true, concurrency: 2 })).toBe('PAUSED · 4/30 done · 2 running (window 2) · 4 scored · 0 masked · mean reward 0.750');
    expect(progressLine({ ...p, paused: false, concurrency: 6 })).toBe('4/30 done · 2 running (window 6) · 4 scored · 0 masked · mean reward 0.750');
  });
  it('reads a progress from a batch older than live control', () => {
    expect(progressLine(p)).toBe('4/30 done · 2 running · 4 scored · 0 masked · mean reward 0.750');
  });
});

const ref = (taskId: string, repeat: number, attempt: number, status = 'COMPLETED', regrade = false): EpisodeRef =>
  ({ workflowId: `berth/b/${taskId}/${repeat}${attempt > 1 ? `~a${attempt}` : ''}`, taskId, repeat, attempt, status, taskQueue: 'q', regrade });

describe('which attempt is reported, and which one comes next', () => {
  it('a regrade that could not run leaves the attempt it regraded reported', () => {
    const all = [ref('t', 1, 1), ref('t', 1, 2, 'COMPLETED', true), ref('t', 1, 3, 'FAILED', true), ref('u', 1, 1, 'CANCELLED')];
    expect(newestEpisodes(all).map((e) => e.workflowId)).toEqual(['berth/b/t/1~a2', 'berth/b/u/1']);
    // The next attempt gets a fresh id past every attempt, failed regrades too.
    expect(nextAttempt(all, { taskId: 't', repeat: 1 })).toBe(4);
    expect(nextAttempt(all, { taskId: 'u', repeat: 1 })).toBe(2);
  });

  it.each([
    [{ taskIds: ['t'] }, true], [{ taskIds: ['t'], repeat: 2 }, true], [{ taskIds: ['t'], repeat: 1 }, false], [{ taskIds: ['u'] }, false], [{}, false],
  ])('--task/--repeat %j names t #2: %j', (sel, expected) => {
    expect(named({ taskId: 't', repeat: 2 }, sel)).toBe(expected);
  });
});

describe('artifacts rebuilt from the manifest (a separate-mode regrade restores them)', () => {
  it('tells /logs/artifacts names from the entries copied beside them, and skips failed and empty ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-manifest-'));
    mkdirSync(join(dir, 'app'), { recursive: true });
    mkdirSync(join(dir, 'data'));
    writeFileSync(join(dir, 'note.txt'), 'note');
    writeFileSync(join(dir, 'app', 'out.txt'), 'ok');
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify([
      { source: '/logs/artifacts', destination: '.', type: 'dir', status: 'ok', service: 'main' },
      { source: '/app/out.txt', destination: 'app/out.txt', type: 'file', status: 'ok', service: 'main' },
      { source: '/data', destination: 'data', type: 'dir', status: 'ok', service: 'main' },
      { source: '/missing', destination: 'missing', type: null, status: 'failed', service: 'main' },
    ]));
    expect(await copiedFromManifest(dir)).toEqual([
      { source: '/logs/artifacts', hostPath: dir, type: 'dir', names: ['note.txt'] },
      { source: '/app/out.txt', hostPath: join(dir, 'app', 'out.txt'), type: 'file' },
      { source: '/data', hostPath: join(dir, 'data'), type: 'dir' },
    ]);
  });

  it('without Berth\'s manifest the folder is /logs/artifacts\' copy; an empty one restores nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-manifest-'));
    expect(await copiedFromManifest(dir)).toEqual([]);
    writeFileSync(join(dir, 'manifest.json'), '{"the sandbox": "wrote its own"}');
    expect(await copiedFromManifest(dir)).toEqual([{ source: '/logs/artifacts', hostPath: dir, type: 'dir', names: ['manifest.json'] }]);
  });
});
