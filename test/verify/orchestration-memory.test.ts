// A test.sh printing 50 MB: its output is redirected inside the container and copied out to disk streaming
// (and redacted streaming), so the worker's memory does not grow with it. Alone in its file for a clean RSS.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/types.ts';
import { runVerification } from '../../src/verify/run-verification.ts';
import { context, Fixture, shTask } from './orchestration-helpers.ts';

const fx = new Fixture();
let agent: SandboxHandle;
const MB = 1024 * 1024;

// A full GC before each reading, so RSS shows what the worker holds on to, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
function settledRss(): number {
  gc();
  gc();
  return process.memoryUsage().rss;
}

beforeAll(async () => {
  agent = await fx.seed();
});
afterAll(() => fx.cleanup());

it('50 MB of test.sh output does not grow the worker RSS and still scores (secrets redacted on the way)', async () => {
  const task = await shTask(fx, 'for i in $(seq 1 50); do head -c 1048576 /dev/zero | tr "\\0" x; echo " key=$KEY"; done; echo 1 > /logs/verifier/reward.txt', {
    timeoutSec: 120,
    extra: '[verifier.env]\nKEY = "${VERIFY_KEY}"',
  });
  // Warm up with one full run, so code loading and the allocator's one-time growth for the copy path (about
  // 20 MB, the same for 50 or 200 MB of output) are not counted: what is measured is what a run keeps.
  await runVerification(context(fx, task, agent, { secrets: { VERIFY_KEY: 'secret-key-value' } }));
  const ctx = context(fx, task, agent, { secrets: { VERIFY_KEY: 'secret-key-value' } });
  const before = settledRss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const r = await runVerification(ctx);
  clearInterval(sampler);
  const after = settledRss();
  peak = Math.max(peak, after);
  expect(r).toMatchObject({ reward: 1, masked: false });
  const size = statSync(join(ctx.logsDir, 'verifier', 'test-stdout.txt')).size;
  expect(size).toBeGreaterThan(50 * MB);
  // After the run the worker holds nothing of the output; the transient peak is garbage of the streaming copy
  // not yet collected, below the output's own size.
  expect(after - before).toBeLessThan(20 * MB);
  expect(peak - before).toBeLessThan(45 * MB);
  const tail = readFileSync(join(ctx.logsDir, 'verifier', 'test-stdout.txt')).subarray(size - 100).toString();
  expect(tail).toMatch(/key=\[REDACTED\]\n$/);
  console.log(`test-stdout.txt ${(size / MB).toFixed(1)} MB; RSS growth ${((after - before) / MB).toFixed(1)} MB after, ${((peak - before) / MB).toFixed(1)} MB at peak`);
}, 180_000);
