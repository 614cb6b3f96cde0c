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
function settled(): { rss: number; held: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, held: m.heapUsed + m.external };
}

beforeAll(async () => {
  agent = await fx.seed();
});
afterAll(() => fx.cleanup());

/** A test.sh printing `mb` MB, each MB followed by the secret (redacted on the way out). */
const printing = (mb: number) => shTask(fx, `for i in $(seq 1 ${mb}); do head -c 1048576 /dev/zero | tr "\\0" x; echo " key=$KEY"; done; echo 1 > /logs/verifier/reward.txt`, {
  timeoutSec: 120,
  extra: '[verifier.env]\nKEY = "${VERIFY_KEY}"',
});

/**
 * One verification of `task`: what the worker still holds once it is over (V8's heap and the buffers outside it,
 * after a full GC: RSS after would also count pages the allocator keeps for reuse, which moved 2 MB between CI runs),
 * its RSS growth at the peak, and the output file.
 */
async function measured(task: Awaited<ReturnType<typeof printing>>) {
  const ctx = context(fx, task, agent, { secrets: { VERIFY_KEY: 'secret-key-value' } });
  const before = settled();
  let peak = before.rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const r = await runVerification(ctx);
  clearInterval(sampler);
  const after = settled();
  const file = join(ctx.logsDir, 'verifier', 'test-stdout.txt');
  return { r, kept: after.held - before.held, peak: Math.max(peak, after.rss) - before.rss, file, size: statSync(file).size };
}

it('50 MB of test.sh output does not grow the worker RSS and still scores (secrets redacted on the way); three times the output, no more memory', async () => {
  const [fifty, hundredFifty] = [await printing(50), await printing(150)];
  // Warm up with one full run, so code loading and the allocator's one-time growth for the copy path (about
  // 20 MB, the same for 50 or 200 MB of output) are not counted: what is measured is what a run keeps.
  await runVerification(context(fx, fifty, agent, { secrets: { VERIFY_KEY: 'secret-key-value' } }));
  const small = await measured(fifty);
  expect(small.r).toMatchObject({ reward: 1, masked: false });
  expect(small.size).toBeGreaterThan(50 * MB);
  // After the run the worker holds nothing of the output; the transient peak is garbage of the streaming copy not yet
  // collected, and it does not grow with the output: 100 MB more of it add (much) less than half that at the peak (a
  // copy that held the output would add all of it). How high that garbage piles before a collection depends on the
  // machine's load (4 MB on a quiet run, 0.6 MB above the output's own size on a loaded CI run), so only its growth
  // is held to a bound.
  expect(small.kept).toBeLessThan(5 * MB);
  const large = await measured(hundredFifty);
  expect(large.r).toMatchObject({ reward: 1, masked: false });
  expect(large.size).toBeGreaterThan(150 * MB);
  expect(large.kept).toBeLessThan(5 * MB);
  expect(large.peak - small.peak).toBeLessThan(50 * MB);
  const tail = readFileSync(large.file).subarray(large.size - 100).toString();
  expect(tail).toMatch(/key=\[REDACTED\]\n$/);
  console.log(`test-stdout.txt ${(small.size / MB).toFixed(1)} and ${(large.size / MB).toFixed(1)} MB; held after ${(small.kept / MB).toFixed(1)} and ${(large.kept / MB).toFixed(1)} MB, at peak ${(small.peak / MB).toFixed(1)} and ${(large.peak / MB).toFixed(1)} MB`);
}, 300_000);
