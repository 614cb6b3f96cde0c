// Shared-mode verification in two execs (Task Folder Verifiers § How the verifier runs): small test files are
// written by the clear's exec and a small /logs/verifier comes back with test.sh's own exec. Anything else takes
// the archive requests, with the same result on the host.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { runVerification } from '../../src/verify/run-verification.ts';
import { context, Fixture, provider, shTask } from './orchestration-helpers.ts';

const fx = new Fixture();
let agent: SandboxHandle;
beforeAll(async () => {
  agent = await fx.seed();
});
afterAll(() => fx.cleanup());

/** The provider, counting its archive requests. */
function counting() {
  const calls = { upload: [] as string[], download: [] as string[] };
  const p = Object.create(provider) as typeof provider;
  p.upload = (h, source, dir, o) => {
    calls.upload.push(dir);
    return provider.upload(h, source, dir, o);
  };
  p.download = (h, path, dir) => {
    calls.download.push(path);
    return provider.download(h, path, dir);
  };
  return { p, calls };
}

describe('verification without archive requests', () => {
  it('a small task: tests placed by the clear, /logs/verifier sent back by test.sh, empty /logs/artifacts not copied', async () => {
    const task = await shTask(fx, 'cat /tests/data.txt > /logs/verifier/seen.txt; echo hi; echo 1 > /logs/verifier/reward.txt', {
      files: { 'tests/data.txt': 'layered data\n' },
    });
    const { p, calls } = counting();
    const ctx = context(fx, task, agent, { provider: p });
    const out = await runVerification(ctx);
    expect(out.reward).toBe(1);
    expect(out.failure_kind).toBeUndefined();
    expect(calls).toEqual({ upload: [], download: [] });
    const dir = join(ctx.logsDir, 'verifier');
    expect(readFileSync(join(dir, 'seen.txt'), 'utf8')).toBe('layered data\n');
    expect(readFileSync(join(dir, 'test-stdout.txt'), 'utf8')).toBe('hi\n');
    expect(JSON.parse(readFileSync(join(ctx.logsDir, 'artifacts', 'manifest.json'), 'utf8'))[0]).toMatchObject({ source: '/logs/artifacts', status: 'empty' });
  });

  it('a /logs/verifier larger than the snapshot is copied whole by archive', async () => {
    const task = await shTask(fx, 'head -c 400000 /dev/zero | tr "\\0" a > /logs/verifier/big.txt; echo 0.5 > /logs/verifier/reward.txt');
    const { p, calls } = counting();
    const ctx = context(fx, task, agent, { provider: p });
    const out = await runVerification(ctx);
    expect(out.reward).toBe(0.5);
    expect(calls.download).toEqual(['/logs/verifier']);
    expect(statSync(join(ctx.logsDir, 'verifier', 'big.txt')).size).toBe(400000);
  });

  it('a file the verifier user cannot read is still copied (by archive), and the reward stands', async () => {
    const task = await shTask(fx, 'echo secret > /logs/verifier/locked.txt; chmod 000 /logs/verifier/locked.txt; echo 1 > /logs/verifier/reward.txt', {
      verifier: 'user = "nobody"',
    });
    const { p, calls } = counting();
    const ctx = context(fx, task, agent, { provider: p });
    const out = await runVerification(ctx);
    expect(out.reward).toBe(1);
    expect(calls.download).toEqual(['/logs/verifier']);
    expect(readFileSync(join(ctx.logsDir, 'verifier', 'locked.txt'), 'utf8')).toBe('secret\n');
  });

  it('tests/ too large to place in an exec are uploaded, and /logs/artifacts with files is copied', async () => {
    const task = await shTask(fx, 'wc -c < /tests/blob.txt > /logs/verifier/size.txt; echo kept > /logs/artifacts/a.txt; echo 1 > /logs/verifier/reward.txt', {
      files: { 'tests/blob.txt': 'b'.repeat(200_000) },
    });
    const { p, calls } = counting();
    const ctx = context(fx, task, agent, { provider: p });
    const out = await runVerification(ctx);
    expect(out.reward).toBe(1);
    expect(calls.upload).toContain('/tests');
    expect(calls.download).toEqual(['/logs/artifacts']);
    expect(readFileSync(join(ctx.logsDir, 'verifier', 'size.txt'), 'utf8').trim()).toBe('200000');
    expect(readFileSync(join(ctx.logsDir, 'artifacts', 'a.txt'), 'utf8')).toBe('kept\n');
  });
});
