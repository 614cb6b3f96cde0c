// The store's key layout and manifests (docs/deployment.md, A results store), pure.
import { describe, expect, it } from 'vitest';
import { attemptKey, batchPrefix, fileKey, jobFileKey, manifestKey } from '../../src/store/keys.ts';
import { INLINE_FILE_BYTES, INLINE_TOTAL_BYTES, inlinePaths } from '../../src/store/episode-files.ts';
import { inlineBytes, notHeld, parseManifest, type Manifest } from '../../src/store/manifest.ts';

describe('store keys', () => {
  it.each([
    ['', 'b1', 'b1/'],
    ['team/evals', 'b1', 'team/evals/b1/'],
    ['p', 'we ird/batch', 'p/we_ird_batch/'],
  ])('prefix %j, batch %j: every object under %j', (prefix, batch, want) => {
    expect(batchPrefix({ prefix }, batch)).toBe(want);
    expect(jobFileKey({ prefix }, batch, 'result.json')).toBe(`${want}job/result.json`);
    expect(attemptKey({ prefix }, batch, `berth/${batch}/t1/r0`, 'run-1').startsWith(want)).toBe(true);
  });

  it('names an attempt by its workflow and run id alone, so a retry rewrites the same objects', () => {
    const a = attemptKey({ prefix: 'p' }, 'b', 'berth/b/hello/r0/a1', '0190-run');
    expect(a).toBe('p/b/episodes/berth_b_hello_r0_a1/0190-run');
    expect(manifestKey(a)).toBe(`${a}/manifest.json`);
    expect(fileKey(a, 'turn-1/agent/trajectory.json')).toBe(`${a}/files/turn-1/agent/trajectory.json`);
  });

  it.each(['', '.', '../x', 'a/../../b'])('refuses the path %j', (path) => {
    expect(fileKey('p/b/episodes/w/r', path)).toBeNull();
  });
});

describe('manifests', () => {
  const good = { version: 1, batchId: 'b', workflowId: 'w', runId: 'r', host: 'h', writtenAt: 'now',
    files: [{ path: 'a.txt', size: 3, sha256: 'a'.repeat(64) }] };

  it('reads a whole manifest back', () => {
    expect(parseManifest(JSON.stringify(good))).toEqual(good);
  });

  it('reads a version 2 manifest with a file inside it', () => {
    const v2 = { ...good, version: 2, files: [{ ...good.files[0], inline: Buffer.from('abc').toString('base64') }] };
    const m = parseManifest(JSON.stringify(v2));
    expect(m).toEqual(v2);
    expect(inlineBytes((m as Manifest).files[0]!)?.toString()).toBe('abc');
    expect(inlineBytes(good.files[0]!)).toBeNull();
  });

  it.each([
    ['{"version": 1, "batchId": "b"', 'not JSON'],
    [JSON.stringify({ ...good, version: 3 }), 'not a version 1 or 2 manifest'],
    [JSON.stringify({ ...good, runId: undefined }), 'no batch, workflow or run id'],
    [JSON.stringify({ ...good, files: [{ path: 'a', size: -1, sha256: 'a'.repeat(64) }] }), 'lacks its path, size or sha256'],
    [JSON.stringify({ ...good, files: [{ path: 'a', size: 1, sha256: 'xyz' }] }), 'lacks its path, size or sha256'],
    [JSON.stringify({ ...good, files: [{ ...good.files[0], inline: 'YWJj' }] }), 'a version 1 manifest with inline files'],
    [JSON.stringify({ ...good, version: 2, files: [{ ...good.files[0], inline: 7 }] }), 'lacks its path, size or sha256'],
  ])('treats %j as no manifest (%s)', (text, why) => {
    const m = parseManifest(text);
    expect('invalid' in m && m.invalid).toContain(why);
  });
});

describe('a folder against its manifest', () => {
  const files = [{ path: 'a.txt', size: 3, sha256: '0'.repeat(64) }, { path: 'turn-1/b.json', size: 0, sha256: '1'.repeat(64) }];
  it.each([
    ['every file, same sizes', { 'a.txt': 3, 'turn-1/b.json': 0 }, []],
    ['extra files besides', { 'a.txt': 3, 'turn-1/b.json': 0, 'c': 9 }, []],
    ['one missing', { 'a.txt': 3 }, ['turn-1/b.json']],
    ['one of another size (cut short)', { 'a.txt': 2, 'turn-1/b.json': 0 }, ['a.txt']],
    ['none', {}, ['a.txt', 'turn-1/b.json']],
  ] as const)('%s', (_name, sizes, want) => {
    expect(notHeld({ files }, (p) => (sizes as Record<string, number>)[p] ?? null)).toEqual(want);
  });
  it('never trusts a path that leaves the folder', () => {
    expect(notHeld({ files: [{ path: '../x', size: 1, sha256: '0'.repeat(64) }] }, () => 1)).toEqual(['../x']);
  });
});

describe('which files ride inside the manifest', () => {
  const K = 1024;
  it.each([
    ['a trivial trial: all of it', [['reward.txt', 2], ['result.json', 900], ['trial.log', 3 * K]], ['reward.txt', 'result.json', 'trial.log']],
    ['a file over the per-file bound is an object', [['a', INLINE_FILE_BYTES], ['b', INLINE_FILE_BYTES + 1]], ['a']],
    ['an empty file rides along', [['empty', 0]], ['empty']],
    ['small files past the total are objects, in order', Array.from({ length: 10 }, (_, i) => [`s${i}`, 30 * K]), ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7']],
    ['a later small file still fits after a large one is skipped', [['big', 300 * K], ['tiny', 1]], ['tiny']],
  ] as [string, [string, number][], string[]][])('%s', (_name, files, want) => {
    expect(INLINE_TOTAL_BYTES).toBe(256 * K);
    expect([...inlinePaths(files.map(([path, size]) => ({ path, size })))]).toEqual(want);
  });
});
